// Package encode is how overshoot writes its machine-readable reports and
// says what is in them: one encoding for every JSON schema (JSON, and
// JSONLine for records), one for CSV (CSV), the shape every schema gives a
// limit (SchemaLimit), and the list of a schema's fields read from the type that
// writes it (Fields), which the schema list of docs/reports.md is checked against.
//
// # What it owns, and what it must not import
//
// The encodings and the field walk only. Each schema's types and name stay
// in the package whose results they carry (scenarios, capacity, httpcheck,
// live, ceiling). It imports algos only (for Limit).
package encode
