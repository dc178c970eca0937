# Sourced by .ci/run, not run on its own. It names the step CI is in, and
# when the script exits non-zero before this run's badges were written (a
# step before the tests failed: apt-get, go mod download, the Redis, the
# preflight, lint, the tamper check; or make test kept no record), it writes
# every finding's badge red, "not run: <step>", so that the badges branch
# never keeps an earlier run's green. The exit status is kept: a step that
# fails still fails CI. cmd/badges' tests run this file with a failing step.
#
#   ci_step NAME        the step that starts now; NAME goes on the badges,
#                       and the step before it is said to have ended, with
#                       how long it took (the last one's when the script exits)
#   ci_at_exit CMD      eval CMD when the script exits, whatever its status
#   ci_badges_written=1 once `make badges` has written this run's badges
#
# The badges are written by `make badges BADGES_NOT_RUN=<step>`, into
# $BADGES_DIR when the environment sets it (badges/ otherwise).

ci_step_name=setup
ci_step_started=$(date +%s)
ci_badges_written=
ci_exit_cmds=()

# ci_step_took says how long the current step has taken, so that a CI log
# says where its minutes went.
ci_step_took() {
  echo "ci: -- $ci_step_name took $(( $(date +%s) - ci_step_started )) s"
}

ci_step() {
  ci_step_took
  ci_step_name=$1
  ci_step_started=$(date +%s)
  echo "ci: -- $1"
}

ci_at_exit() {
  ci_exit_cmds+=("$1")
}

ci_on_exit() {
  local rc=$? cmd
  set +e # run to the end whatever fails here; rc stays the script's status
  ci_step_took
  if [ "$rc" -ne 0 ] && [ -z "$ci_badges_written" ]; then
    echo "ci: step '$ci_step_name' failed (exit $rc): every finding's badge says \"not run: $ci_step_name\""
    make --no-print-directory badges BADGES_NOT_RUN="$ci_step_name" ||
      echo "ci: the not-run badges could not be written either" >&2
  fi
  for cmd in ${ci_exit_cmds[@]+"${ci_exit_cmds[@]}"}; do
    eval "$cmd"
  done
  exit "$rc"
}

trap ci_on_exit EXIT
# A cancelled run (Ctrl-C, or CI's SIGTERM) exits through the trap above too.
trap 'exit 130' INT
trap 'exit 143' TERM
