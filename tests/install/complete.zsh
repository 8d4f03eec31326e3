#!/usr/bin/env zsh
# Prints what zsh's completion system offers for command lines, using the
# completion functions of a directory:
#   zsh -f complete.zsh DIR 'max_rss bench -' 'max_rss --backend ' ...
# One line per candidate, "N<TAB>candidate" for the Nth command line (from 1).
# Runs one interactive zsh in a pseudo-terminal (zpty), loads compinit with DIR
# first in $fpath (once: it takes seconds), then for each command line types it
# and a Tab, catches every candidate that reaches compadd, and clears the line.
# Enter is unbound, so no command line is ever run.
emulate -L zsh
zmodload zsh/zpty || exit 2
local dir=$1
shift

zpty capture zsh -f -i
zpty -w capture 'PS1= PS2= RPS1='
zpty -w capture "fpath=(${(q)dir} \$fpath); autoload -Uz compinit; compinit -u -D"
# Each candidate that would be added is printed with a marker (spelt so that
# the terminal's echo of these lines does not contain it); the real compadd
# still runs so the completion system behaves as usual.
zpty -w capture 'compadd() {
  if [[ ${(j: :)@} == *-[OAD]* ]]; then builtin compadd "$@"; return; fi
  local -a __got; builtin compadd -O __got "$@"
  print -rl -- ${^__got/#/<<${:-match}>>}
  builtin compadd "$@"
}'
# After each completion: show no list (it could ask "do you wish to see all
# N possibilities?") and insert nothing; comppostfuncs is emptied after each
# use, so the function puts itself back.
zpty -w capture '_capture_quiet() { compstate[list]=; compstate[insert]=; comppostfuncs=(_capture_quiet) }'
zpty -w capture 'comppostfuncs=(_capture_quiet)'
# Tab: complete, say so, clear the line for the next one.
zpty -w capture '_capture_tab() { zle _capture_complete; print -r -- "<<${:-done}>>"; BUFFER= }'
zpty -w capture 'zle -C _capture_complete complete-word _main_complete; zle -N _capture_tab'
# Last, as it ends line editing: Enter does nothing.
zpty -w capture "bindkey -e; bindkey '^I' _capture_tab; bindkey '^M' undefined-key; bindkey '^J' undefined-key"

integer index=0 deadline
local typed line
for typed in "$@"; do
  index+=1
  zpty -w -n capture "$typed"$'\t'
  deadline=$(( SECONDS + 20 ))
  while :; do
    if (( SECONDS > deadline )); then
      print -u2 "complete.zsh: no answer within 20 s for '$typed'"
      zpty -d capture
      exit 1
    fi
    zpty -r -t capture line || { sleep 0.02; continue }
    line=${line//$'\r'/}; line=${line%$'\n'}
    [[ $line == *'<<done>>'* ]] && break
    [[ $line == *'<<match>>'* ]] && print -r -- "$index"$'\t'"${line##*<<match>>}"
  done
done
zpty -d capture
