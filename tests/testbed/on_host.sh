#!/bin/sh
# Runs a command "on" namespace host <h> (netns_setup.sh), the way a job is started from a
# cluster's node:  on_host.sh h1 mpirun ...
h=$1; shift
exec ip netns exec "$h" unshare --uts /bin/sh -c 'hostname "$0" && exec "$@"' "$h" "$@"
