#!/usr/bin/env bash
# Checks, in seconds, that the Redis tests will get a Redis, so that
# `OVERSHOOT_REQUIRE_REDIS=1 make test` fails before minutes of compiling and
# simulating rather than after. It follows internal/redistest's order:
#   1. OVERSHOOT_REDIS set: it must answer PING (no fallback to Docker);
#   2. else a Docker engine must answer; the local image
#      (overshoot/redis:7-local, .ci/redis-image.sh) is built when it is
#      missing or older than the script's layout, since the clock tests need
#      its libfaketime and an engine without a registry needs it for all;
#      the tests then run OVERSHOOT_REDIS_IMAGE if set (present or pullable),
#      else redis:7-alpine if present, else the local image.
# On failure: one line on stderr with the remedy, exit 1. On success: one line.
# Usage: .ci/redis-preflight.sh   (reads the environment only)
set -uo pipefail

default_image=redis:7-alpine
local_image=overshoot/redis:7-local
remedy="set OVERSHOOT_REDIS=127.0.0.1:6379"

fail() {
  echo "redis preflight: $*" >&2
  exit 1
}

# redis_ping ADDR: 0 if a Redis at host:port answers +PONG (bash's /dev/tcp: no
# redis-cli needed); else 1 with the reason in $why. A few tries, as
# redistest's own ping allows a restarting server a moment.
redis_ping() {
  local host=${1%:*} port=${1##*:} reply
  host=${host#\[} host=${host%\]}
  for _ in 1 2 3; do
    if reply=$(timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/$1" || exit 1
      printf "PING\r\n" >&3; IFS= read -r -t 2 line <&3; printf "%s" "$line"' "$host" "$port" 2>/dev/null); then
      reply=${reply%$'\r'}
      [[ $reply == +PONG ]] && return 0
      why=${reply:-no reply}
    else
      why="no answer on $host:$port"
    fi
    sleep 0.5
  done
  return 1
}

# present IMAGE: the engine has it.
present() { docker image inspect "$1" >/dev/null 2>&1; }

# pull IMAGE: 0 if pulled; else 1 with the reason in $why. The registry gets
# 5 s to answer (an engine without one fails in well under a second, but a
# black-holed network would hang); once it answers, the download (which the
# tests would make anyway) gets up to 5 minutes.
pull() {
  local out pid tenths=0
  out=$(mktemp)
  timeout 300 docker pull "$1" >"$out" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null && ! grep -q 'Pulling from\|Digest:' "$out"; do
    if ((tenths >= 50)); then
      kill "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      rm -f "$out"
      why="the registry did not answer in 5 s"
      return 1
    fi
    sleep 0.1
    tenths=$((tenths + 1))
  done
  if wait "$pid"; then
    rm -f "$out"
    return 0
  fi
  why=$(grep -v '^[[:space:]]*$' "$out" | tail -n 1)
  why=${why:-docker pull failed}
  rm -f "$out"
  return 1
}

if [[ -n ${OVERSHOOT_REDIS:-} ]]; then
  redis_ping "$OVERSHOOT_REDIS" ||
    fail "OVERSHOOT_REDIS=$OVERSHOOT_REDIS does not answer PING ($why); start that Redis, or unset OVERSHOOT_REDIS to use Docker"
  echo "redis preflight: ok: OVERSHOOT_REDIS=$OVERSHOOT_REDIS answers PING"
  exit 0
fi

command -v docker >/dev/null 2>&1 ||
  fail "no OVERSHOOT_REDIS and no docker command; $remedy"
if ! err=$(timeout 10 docker version --format '{{.Server.Version}}' 2>&1 >/dev/null); then
  err=$(printf %s "$err" | grep -v '^[[:space:]]*$' | tail -n 1)
  fail "no OVERSHOOT_REDIS and Docker does not answer (${err:-timed out after 10 s}); start Docker, or set OVERSHOOT_REDIS=127.0.0.1:6379"
fi

# The local image: the only one with libfaketime (the tests that step a real
# server's clock start it by name), and the one an engine without a registry
# runs. Built here when it is missing or of an older layout, so that the
# README's test command is the only one a user types.
layout=$(sed -n 's/^layout=//p' "$(dirname "$0")/redis-image.sh")
have=$(docker image inspect "$local_image" --format '{{index .Config.Labels "overshoot.redis-image"}}' 2>/dev/null || true)
if [[ $have != "$layout" ]]; then
  echo "redis preflight: building $local_image (layout ${have:-none}, want $layout): .ci/redis-image.sh"
  "$(dirname "$0")/redis-image.sh" "$local_image" ||
    fail "could not build $local_image (its output above says why); or set OVERSHOOT_REDIS=127.0.0.1:6379"
fi

if [[ -n ${OVERSHOOT_REDIS_IMAGE:-} ]]; then
  image=$OVERSHOOT_REDIS_IMAGE
  present "$image" || pull "$image" ||
    fail "OVERSHOOT_REDIS_IMAGE=$image is not here and cannot be pulled ($why); unset it to use $local_image, or set OVERSHOOT_REDIS=127.0.0.1:6379"
elif present "$default_image"; then
  image=$default_image
else
  image=$local_image
fi
extra=; [[ $image == "$local_image" ]] || extra=" (and $local_image for the clock tests)"
echo "redis preflight: ok: Docker with $image$extra"
