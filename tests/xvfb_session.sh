#!/bin/bash
# xvfb_session.sh SCREEN COMMAND [ARGS...]
# Runs COMMAND with DISPLAY set to a private Xvfb server of one screen SCREEN (WIDTHxHEIGHTxDEPTH)
# and exits with COMMAND's exit status, whatever happens while the server is stopped.
#
# Xvfb picks a free display number itself (-displayfd), so sessions started at the same moment
# never race for one, and it reports the number only once it accepts connections. The server is
# this script's child with SIGUSR1 at its default, so it sends no readiness signals; xvfb-run's
# own clean-up could be interrupted by those (its server signals again at every reset) and then
# exited 5 after the command had succeeded or failed as expected. Exit 125 when the server does
# not start within 30 s; its log is printed on stderr.
set -u
if [ $# -lt 2 ]; then
    echo "usage: xvfb_session.sh WIDTHxHEIGHTxDEPTH COMMAND [ARGS...]" >&2
    exit 2
fi
screen=$1
shift

work=$(mktemp -d -t xvfb-session.XXXXXX) || exit 125
server=
stop_server() {
    if [ -n "$server" ]; then
        kill "$server" 2> /dev/null
        wait "$server" 2> /dev/null
        server=
    fi
    rm -rf "$work"
}
trap stop_server EXIT
trap 'exit 143' TERM INT HUP

# The file exists before the server starts, so the first read below never races its creation.
: > "$work/display"
Xvfb -displayfd 3 -screen 0 "$screen" -nolisten tcp 3>> "$work/display" 2> "$work/log" &
server=$!

display=
for _ in $(seq 600); do
    read -r display < "$work/display"
    [ -n "$display" ] && break
    if ! kill -0 "$server" 2> /dev/null; then
        break
    fi
    sleep 0.05
done
if [ -z "$display" ]; then
    echo "xvfb_session: Xvfb did not start:" >&2
    cat "$work/log" >&2
    exit 125
fi

DISPLAY=":$display" "$@"
