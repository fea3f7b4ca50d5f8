#!/bin/sh
# netns_setup.sh up N | down N
# N network namespaces h1..hN as hosts: each has lo and eth0=10.200.0.<i>/24, and all eth0s are
# plugged into a bridge that lives in a namespace of its own ("mhsw"), so nothing is added to
# the machine's own network and traffic between hosts really crosses veth links.
# /etc/netns/h<i>/hosts makes the names h1..hN resolve inside the namespaces.
set -e
cmd=$1; n=${2:-2}
case "$cmd" in
  up)
    ip netns add mhsw
    ip -n mhsw link add br0 type bridge
    ip -n mhsw link set br0 up
    hosts="127.0.0.1 localhost"
    i=1; while [ $i -le $n ]; do hosts="$hosts
10.200.0.$i h$i"; i=$((i+1)); done
    i=1
    while [ $i -le $n ]; do
      h=h$i
      ip netns add $h
      ip link add "mh-$h" netns mhsw type veth peer name eth0 netns $h
      ip -n mhsw link set "mh-$h" master br0 up
      ip -n $h link set lo up
      ip -n $h addr add 10.200.0.$i/24 dev eth0
      ip -n $h link set eth0 up
      mkdir -p /etc/netns/$h
      printf '%s\n' "$hosts" > /etc/netns/$h/hosts
      echo "$h" > /etc/netns/$h/hostname
      i=$((i+1))
    done ;;
  down)
    # never fails: it also clears what an interrupted run left behind
    i=1
    while [ $i -le $n ]; do
      ip netns del h$i 2>/dev/null || true
      rm -rf /etc/netns/h$i
      i=$((i+1))
    done
    ip netns del mhsw 2>/dev/null || true
    rmdir /etc/netns 2>/dev/null || true ;;
  *) echo "usage: $0 up N | down N" >&2; exit 2 ;;
esac
