# bash completion for uring-trace.  Installed by `make install` to
# PREFIX/share/bash-completion/completions/uring-trace.
_uring_trace()
{
	local cur prev
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	local opts="-e -o -p -c -d -l -I -D -v -q -h --comm --run-as --sample --buffer --ring --after
		--max-snapshots --max-size --emit-c --dump --all-in-kernel --compile --summary-only --json --fail-on
		--snapshot-on --verbose --quiet --info --version --help --all-rings --check"
	if [ "$COMP_CWORD" -eq 1 ] && [[ $cur != -* ]]; then
		COMPREPLY=($(compgen -W "dump stats render" -- "$cur") $(compgen -f -X '!*.ut' -- "$cur") \
			   $(compgen -d -- "$cur"))
		return
	fi
	case ${COMP_WORDS[1]} in
	dump|stats)
		COMPREPLY=($(compgen -W "--json" -- "$cur") $(compgen -f -X '!*.fxt*' -- "$cur") $(compgen -d -- "$cur"))
		return ;;
	render)
		case $prev in
		-o) COMPREPLY=($(compgen -f -- "$cur")); return ;;
		--from|--to|--busiest|--width|--only) return ;;
		esac
		COMPREPLY=($(compgen -W "-o --from --to --busiest --width --only" -- "$cur") \
			   $(compgen -f -X '!*.fxt*' -- "$cur") $(compgen -d -- "$cur"))
		return ;;
	esac
	case $prev in
	-o|--json)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	-I)
		COMPREPLY=($(compgen -d -- "$cur")); return ;;
	-p)
		COMPREPLY=($(compgen -W "$(ps -eo pid= 2>/dev/null)" -- "$cur")); return ;;
	--run-as)
		COMPREPLY=($(compgen -u -- "$cur")); return ;;
	--dump)
		COMPREPLY=($(compgen -W "ast typed resources placement reuse c reader-c program" -- "$cur")); return ;;
	--fail-on|--snapshot-on)
		COMPREPLY=($(compgen -W "info warn crit" -- "$cur")); return ;;
	-l)
		COMPREPLY=($(compgen -W "tracepoint:io_uring:* tracepoint:block:* tracepoint:syscalls:*" -- "$cur"))
		return ;;
	-e|-c|-d|-D|--comm|--sample|--buffer|--ring|--after|--max-snapshots|--max-size)
		return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -X '!*.ut' -- "$cur") $(compgen -d -- "$cur"))
	fi
}
complete -o filenames -F _uring_trace uring-trace
