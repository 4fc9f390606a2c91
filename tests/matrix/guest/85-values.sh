#!/bin/sh
# Guest test: builtin values compiled on the host (tests/matrix/values.ut):
# what their BPF does must pass this kernel's verifier and give the same
# text as on the host.
cd /tmp || exit 1
/matrix/uring-trace -q --summary-only /matrix/values.uto >/tmp/values.out 2>/tmp/values.err
rc=$?
if [ $rc -eq 0 ] && grep -Eq '^127\.0\.0\.1\|(\\x[0-9a-f]{2}|[ -~]){4}\|3412\|1$' /tmp/values.out &&
	! grep -q 'after exit' /tmp/values.out; then
	echo "PASS values/builtins"
else
	echo "FAIL values/builtins: status $rc $(head -c 300 /tmp/values.out) $(head -c 600 /tmp/values.err)"
fi
# the enumerator as this kernel has it, not as the host that compiled it
want=1
case $(uname -r) in 5.10.*) want=0 ;; esac
if grep -qx "nowait $want" /tmp/values.out; then
	echo "PASS values/enumerator_of_this_kernel"
else
	echo "FAIL values/enumerator_of_this_kernel: want nowait $want: $(head -c 300 /tmp/values.out)"
fi
exit 0
