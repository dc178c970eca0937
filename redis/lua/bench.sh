#!/bin/sh
# bench.sh ADDR [REQUESTS] [CLIENTS]: redis-benchmark EVALSHA on each of the
# six scripts, on one key and on 10,000 keys, against the Redis at ADDR
# (host:port) -- the same scripts, limit (100/s, burst 100) and Redis TIME
# as `go test -run '^$' -bench Lua ./redis/lua/`, so the two can be read side by side.
# Keys go under overshoot:bench-sh: and are deleted at the end.
set -eu

addr=${1:?usage: bench.sh host:port [requests] [clients]}
requests=${2:-200000}
clients=${3:-32}
host=${addr%:*}
port=${addr##*:}
dir=$(cd "$(dirname "$0")" && pwd)
cli="redis-cli -h $host -p $port"

# ARGV: now (-1: Redis TIME), rate, window µs, burst, unit, refill, as
# algos.MustLimit(100, algos.Second, 100) derives them.
limit="-1 100 1000000 100 10000 1"

for algo in token-bucket leaky-bucket gcra fixed-window sliding-log sliding-counter; do
	# The Go package loads exactly prelude.lua followed by the script; the
	# SHA check proves this is the same text.
	want=$(cat "$dir/prelude.lua" "$dir/$algo.lua" | sha1sum | cut -d' ' -f1)
	sha=$(cat "$dir/prelude.lua" "$dir/$algo.lua" | $cli -x SCRIPT LOAD)
	if [ "$sha" != "$want" ]; then
		echo "bench.sh: $algo loaded as $sha, but its text hashes to $want" >&2
		exit 1
	fi
	for keys in 1 10000; do
		if [ "$keys" = 1 ]; then
			key="overshoot:bench-sh:$algo:0"
			rand=""
		else
			key="overshoot:bench-sh:$algo:__rand_int__"
			rand="-r $keys"
		fi
		# shellcheck disable=SC2086 # $rand and $limit are word lists
		ops=$(redis-benchmark -h "$host" -p "$port" -n "$requests" -c "$clients" $rand -q \
			EVALSHA "$sha" 1 "$key" $limit | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1)
		printf '%-16s keys=%-6s %s (redis-benchmark -c %s, sha %s)\n' "$algo" "$keys" "$ops" "$clients" "$sha"
	done
done

$cli --scan --pattern 'overshoot:bench-sh:*' | while read -r k; do $cli DEL "$k" >/dev/null; done
