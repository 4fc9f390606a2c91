#!/bin/sh
# Runs inside a matrix guest (busybox sh, as the initramfs test command):
# every /matrix/guest/*.sh in name order, each time-boxed, each between
#   @@GUEST-TEST NAME@@ ... @@GUEST-TEST-END NAME status=N@@
# Lines a guest test prints as "PASS name" / "FAIL name: why" / "SKIP ..."
# are relayed by the host (tests/matrix/matrix.sh) with the kernel prepended.
# Exits 1 if any guest test exited non-zero.
export PATH=/matrix:/bin:/sbin:/usr/bin:/usr/sbin
cd /tmp || exit 1
status=0
for t in /matrix/guest/*.sh; do
  [ -f "$t" ] || continue
  name=$(basename "$t" .sh)
  echo "@@GUEST-TEST $name@@"
  timeout "${UT_GUEST_TEST_TIMEOUT:-120}" sh "$t"
  rc=$?
  echo "@@GUEST-TEST-END $name status=$rc@@"
  [ "$rc" -eq 0 ] || status=1
done
exit $status
