#!/bin/sh
# The egress proxy image's entry point: Squid in the foreground (-N) as PID 1, its own messages on stderr (-d 1;
# the config's cache_log is /dev/null) and its access log on stdout. Arguments go to squid (`-f <config>`).
#
# Squid opens its access log by path, and a non-root process cannot always open /dev/stdout: the runtime may have
# made that pipe as root, or made it a socket (ENXIO). So the config logs to a FIFO in /run/squid (the chart's
# emptyDir under a read-only root) and cat copies it to the stdout this process inherited. cat holds the FIFO
# read-write, so it never sees end-of-file when Squid closes and reopens its log; it ends with the container.
set -eu
fifo=/run/squid/access.log
[ -p "$fifo" ] || { rm -f "$fifo"; mkfifo -m 0600 "$fifo"; }
cat <>"$fifo" &
exec /usr/sbin/squid -N -d 1 "$@"
