#!/bin/sh
# fable source "default": written by fable; `fable install` rewrites this file and `fable uninstall` removes it.
# Cline does not run it by this name: fable's launchers beside it (PreToolUse, ...) do,
# with the event as $1 and Cline's JSON payload on stdin.
# fable-data: {"source":"default","hooks":{"TaskStart":[{"command":"\"$FABLE_HOME/sources/default/current/bin/fable-hook\" session-start --host cline","timeout":10}],"PreToolUse":[{"command":"\"$FABLE_HOME/sources/default/current/bin/fable-hook\" pre-tool-use --host cline","timeout":10}],"PostToolUse":[{"command":"\"$FABLE_HOME/sources/default/current/bin/fable-hook\" post-tool-use --host cline","timeout":10}]}}
fable_event=$1
fable_payload=$(cat)
fable_tool=$(printf '%s\n' "$fable_payload" | sed -n \
  -e 's/.*"tool_call":{"id":"[^"]*","name":"\([^"]*\)".*/\1/p' \
  -e 's/.*"tool_result":{"id":"[^"]*","name":"\([^"]*\)".*/\1/p' | head -n 1)
fable_json_string() {
  tr -d '\000-\010\013\014\016-\037' | awk 'BEGIN { ORS = ""; printf "\"" }
    { gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); gsub(/\t/, "\\t"); gsub(/\r/, "\\r")
      if (NR > 1) printf "\\n"; printf "%s", $0 }
    END { printf "\"" }'
}
fable_run() {
  if [ -n "$1" ]; then
    printf '%s\n' "$fable_tool" | grep -Eqx -e "$1" || return 0
  fi
  fable_err=$(mktemp 2>/dev/null) || fable_err=/dev/null
  if [ -n "$2" ] && command -v timeout >/dev/null 2>&1; then
    fable_out=$(printf '%s\n' "$fable_payload" | timeout "$2" sh -c "$3" 2>"$fable_err")
  else
    fable_out=$(printf '%s\n' "$fable_payload" | sh -c "$3" 2>"$fable_err")
  fi
  fable_rc=$?
  if [ "$fable_rc" -eq 2 ]; then
    fable_reason=$(fable_json_string <"$fable_err")
    [ "$fable_err" = /dev/null ] || rm -f "$fable_err"
    if [ "$fable_event" = PreToolUse ]; then
      printf 'HOOK_CONTROL\t{"cancel":true,"errorMessage":%s}\n' "$fable_reason"
      exit 3
    fi
    printf 'HOOK_CONTROL\t{"contextModification":%s}\n' "$fable_reason"
    return 0
  fi
  if [ "$fable_err" != /dev/null ]; then
    cat "$fable_err" >&2
    rm -f "$fable_err"
  fi
  fable_line=$(printf '%s\n' "$fable_out" | sed -n 's/^HOOK_CONTROL	//p' | tail -n 1)
  [ -n "$fable_line" ] || fable_line=$(printf '%s' "$fable_out" | tr '\n' ' ')
  case $fable_line in
  '{'*) printf 'HOOK_CONTROL\t%s\n' "$fable_line" ;;
  *[![:space:]]*) printf '%s\n' "$fable_out" >&2; return 0 ;;
  *) return 0 ;;
  esac
  case $fable_line in
  *'"cancel":true'* | *'"cancel": true'*) exit 3 ;;
  esac
}
case $fable_event in
TaskStart)
  fable_run '' '10' '"$FABLE_HOME/sources/default/current/bin/fable-hook" session-start --host cline'
  ;;
PreToolUse)
  fable_run '' '10' '"$FABLE_HOME/sources/default/current/bin/fable-hook" pre-tool-use --host cline'
  ;;
PostToolUse)
  fable_run '' '10' '"$FABLE_HOME/sources/default/current/bin/fable-hook" post-tool-use --host cline'
  ;;
esac
exit 0
