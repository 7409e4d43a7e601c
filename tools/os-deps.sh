#!/usr/bin/env bash
# The OS packages the isolated worker (dotboxd.isolation) needs: libseccomp (for the seccomp layer,
# loaded by the pyseccomp binding) and util-linux's unshare (for the namespaces). Both are on a stock
# Debian machine; this installs whichever is missing when it can (root with apt-get), and otherwise
# only warns: without them the worker's strict profile refuses to run (fail closed), it never runs
# with less.
set -euo pipefail
missing=()
ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2' || missing+=(libseccomp2)
command -v unshare >/dev/null 2>&1 || missing+=(util-linux)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "os-deps: installing ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
else
  echo "os-deps: missing ${missing[*]}: the isolated worker will refuse to run (E-ISOLATION-UNAVAILABLE)" >&2
fi
