#!/usr/bin/env bash
# Kernel enumerators take the value of the kernel that runs the script, on
# both sides (the kernel's read-only data, the reader's table): a .uto
# whose enumerator is renamed stands for one compiled on a kernel where
# the name had another value, or where this kernel lacks it.
source "$(dirname "$0")/../lib.sh"
need_root_bpf enums || exit 0

cat >"$TMP/enums.ut" <<'UT'
interval:ms:20 {
	printf("%d %d %d %d\n", IORING_OP_READ, NO_SUCH_ENUM_UT ?? -5, exists(NO_SUCH_ENUM_UT), exists(IORING_OP_READ));
	exit();
}
UT
for side in reader kernel; do
	flag=; [ $side = kernel ] && flag=--all-in-kernel
	out=$("$UT" -q --summary-only $flag "$TMP/enums.ut" 2>&1)
	if [ "$out" = "22 -5 0 1" ]; then pass "enums/values_$side"; else fail "enums/values_$side" "$out"; fi
done

"$UT" -q --compile -o "$TMP/enums.uto" "$TMP/enums.ut"
# IORING_OP_SEND is as long as IORING_OP_READ: the same .uto, another name
sed 's/IORING_OP_READ/IORING_OP_SEND/g' "$TMP/enums.uto" >"$TMP/send.uto"
out=$("$UT" -q --summary-only "$TMP/send.uto" 2>&1)
if [ "$out" = "26 -5 0 1" ]; then pass enums/value_of_the_running_kernel; else fail enums/value_of_the_running_kernel "$out"; fi

sed 's/IORING_OP_READ/IORING_OP_RXAD/g' "$TMP/enums.uto" >"$TMP/absent.uto"
out=$("$UT" -q --summary-only "$TMP/absent.uto" 2>&1); rc=$?
if [ $rc = 1 ] && grep -q "enums.ut:2:26: kernel .* has no enumerator IORING_OP_RXAD.*IORING_OP_RXAD ?? VALUE" <<<"$out"
then pass enums/absent_is_an_error_at_its_use; else fail enums/absent_is_an_error_at_its_use "rc $rc: $out"; fi

# a default must be a constant: it is the value where the kernel lacks the name
echo 'BEGIN { $x = 3; printf("%d\n", NO_SUCH_ENUM_UT ?? $x); }' >"$TMP/bad.ut"
out=$("$UT" -q --emit-c "$TMP/bad.ut" 2>&1)
if grep -q "bad.ut:1:51: error: the default of enumerator NO_SUCH_ENUM_UT is a constant integer" <<<"$out"
then pass enums/default_is_a_constant; else fail enums/default_is_a_constant "$out"; fi
