# bash completion for reduce: commands, each command's options and engine kinds, read from reduce's own
# help at completion time (`reduce --help`, `reduce help CMD`), so they are the option tables reduce
# parses with. Installed as share/bash-completion/completions/reduce; or: source scripts/completion/reduce.bash
_reduce() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" program="${COMP_WORDS[0]}"
  local command="" word
  for word in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    case "$word" in -*) ;; *) command="$word"; break ;; esac
  done
  # The command: one of `reduce --help`'s list, or a model (`reduce MODEL.onnx` reduces it).
  if [[ -z "$command" && "$cur" != -* ]]; then
    local commands
    commands=$("$program" --help 2>/dev/null | sed -n 's/^  \([a-z]\+\) .*/\1/p')
    COMPREPLY=($(compgen -W "$commands help version" -- "$cur") $(compgen -f -X '!*.onnx*' -- "$cur") $(compgen -d -- "$cur"))
    return
  fi
  case "$command" in
    *.onnx | *.onnxtxt | "") command=reduce ;;
    help) COMPREPLY=($(compgen -W "$("$program" --help 2>/dev/null | sed -n 's/^  \([a-z]\+\) .*/\1/p') reduce" -- "$cur")); return ;;
  esac
  # An engine spec: the kinds the help lists ("engine kinds" section, each line `  KIND...`).
  if [[ "$prev" == --engine || "$prev" == --reference ]]; then
    local kinds
    kinds=$("$program" help "$command" 2>/dev/null | sed -n '/^engine kinds/,/^$/s/^  \([a-z0-9-]\+\).*/\1/p')
    COMPREPLY=($(compgen -W "$kinds" -- "$cur"))
    return
  fi
  if [[ "$cur" == -* ]]; then
    local options
    options=$("$program" help "$command" 2>/dev/null | grep -oE -- '--[a-z0-9][a-z0-9-]*' | sort -u)
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _reduce reduce
