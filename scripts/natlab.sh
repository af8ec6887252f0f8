#!/usr/bin/env bash
# natlab.sh: witan nodes behind NATs, in network namespaces (root only).
#
#   scripts/natlab.sh cone 10000        # endpoint-independent NATs
#   scripts/natlab.sh symmetric 100000  # MASQUERADE --random-fully
#
# A "public" segment (a bridge in namespace wl-pub, 11.77.0.0/24) holds
# witan relay (11.77.0.10). Two private LANs sit behind NAT router
# namespaces: LAN A (192.168.77.0/24, router wl-ra at 11.77.0.1) with
# nodes wl-a and wl-a2, LAN B (192.168.78.0/24, router wl-rb at
# 11.77.0.2) with node wl-b. The routers MASQUERADE onto the segment and
# drop what arrives unsolicited; nothing routes to the LANs. The segment
# models the Internet, so its addresses are public ones (go-libp2p counts
# documentation and private ranges as unroutable, and hole punches only
# from a public address): no namespace here has a link out of the lab,
# so nothing sent to them leaves it.
#
# Node A holds a session of N entries (seeded by TestNATLabSeed); node B
# is given only the session id and the relay's address, once A speaks
# DCUtR. The script measures the time from B's start to equal heads,
# B's connections to A at the end (GET /peers), and the bytes the relay
# sent meanwhile against those B's NAT received. Then wl-a2, on A's LAN
# with mDNS and no DHT, must reach the same heads (mDNS keeps working
# beside the DHT). It fails when B or A2 does not converge, when behind
# cone NATs B has no hole-punched connection to A or the relay sent a
# quarter or more of what B received, and when behind symmetric NATs B's
# connection to A is not relayed. Every namespace is removed on exit,
# failure or not (NATLAB_KEEP=DIR keeps the nodes' logs; NATLAB_V=1
# makes them verbose).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-cone}
n=${2:-10000}
case $mode in
cone) masq="" ;;
symmetric) masq="--random-fully" ;;
*) echo "usage: scripts/natlab.sh cone|symmetric [N]" >&2; exit 2 ;;
esac
if [ "$(id -u)" != 0 ]; then
	echo "natlab: needs root (ip netns, iptables)" >&2
	exit 2
fi
for tool in ip iptables curl; do
	if ! command -v $tool >/dev/null 2>&1; then
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq && apt-get install -y -qq --no-install-recommends iproute2 iptables curl >/dev/null
		break
	fi
done

nss="wl-pub wl-relay wl-ra wl-rb wl-a wl-a2 wl-b"
work=$(mktemp -d /tmp/natlab.XXXXXX)
pids=()
# Stop every process in the lab's namespaces (those started here, and any
# they left) before removing the namespaces and the data directories: a
# namespace outlives its name while a process is in it, and a node whose
# data directory is gone cannot stop (Badger retries its flush).
stopall() {
	local sig=$1 left=""
	for ns in $nss; do left="$left $(ip netns pids "$ns" 2>/dev/null || true)"; done
	left="$left ${pids[*]}"
	for p in $left; do kill -"$sig" "$p" 2>/dev/null || true; done
}
cleanup() {
	stopall TERM
	for _ in $(seq 150); do
		alive=""
		for ns in $nss; do alive="$alive$(ip netns pids "$ns" 2>/dev/null || true)"; done
		[ -z "$alive" ] && break
		sleep 0.1
	done
	if [ -n "$alive" ]; then
		echo "natlab: processes still running 15 s after SIGTERM, killed: $alive"
		stopall KILL
		sleep 0.5
	fi
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	for ns in $nss; do ip netns del "$ns" 2>/dev/null || true; done
	if [ -n "${NATLAB_KEEP:-}" ]; then mkdir -p "$NATLAB_KEEP" && cp "$work"/*.err "$work"/*.out "$work"/*.peers "$NATLAB_KEEP"/ 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
for ns in $nss; do ip netns del "$ns" 2>/dev/null || true; done

nsx() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
veth() { ip link add "$2" netns "$1" type veth peer name "$4" netns "$3"; }

for ns in $nss; do ip netns add "$ns"; nsx "$ns" ip link set lo up; done
nsx wl-pub ip link add br0 type bridge
nsx wl-pub ip link set br0 up
veth wl-relay eth0 wl-pub p-relay
veth wl-ra wan wl-pub p-ra
veth wl-rb wan wl-pub p-rb
for p in p-relay p-ra p-rb; do nsx wl-pub ip link set "$p" master br0 up; done
nsx wl-relay ip addr add 11.77.0.10/24 dev eth0
nsx wl-ra ip addr add 11.77.0.1/24 dev wan
nsx wl-rb ip addr add 11.77.0.2/24 dev wan
nsx wl-ra ip link add lan type bridge
veth wl-a eth0 wl-ra la1
veth wl-a2 eth0 wl-ra la2
for p in la1 la2; do nsx wl-ra ip link set "$p" master lan up; done
veth wl-b eth0 wl-rb lan
nsx wl-ra ip addr add 192.168.77.1/24 dev lan
nsx wl-rb ip addr add 192.168.78.1/24 dev lan
nsx wl-a ip addr add 192.168.77.2/24 dev eth0
nsx wl-a2 ip addr add 192.168.77.3/24 dev eth0
nsx wl-b ip addr add 192.168.78.2/24 dev eth0
for x in "wl-relay eth0" "wl-ra wan" "wl-ra lan" "wl-rb wan" "wl-rb lan" "wl-a eth0" "wl-a2 eth0" "wl-b eth0"; do
	set -- $x
	nsx "$1" ip link set "$2" up
done
nsx wl-a ip route add default via 192.168.77.1
nsx wl-a2 ip route add default via 192.168.77.1
nsx wl-b ip route add default via 192.168.78.1
for r in wl-ra wl-rb; do
	nsx $r sysctl -qw net.ipv4.ip_forward=1
	nsx $r iptables -t nat -A POSTROUTING -o wan -j MASQUERADE $masq
	nsx $r iptables -A FORWARD -i wan -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT
	nsx $r iptables -A FORWARD -i wan -j DROP
	nsx $r iptables -A INPUT -i wan -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT
	nsx $r iptables -A INPUT -i wan -j DROP
done

echo "== natlab $mode, $n entries: building witan and seeding A"
go build -o "$work/witan" ./cmd/witan
WITAN_NATLAB_SEED="$work/a" WITAN_NATLAB_N="$n" go test -count=1 -run '^TestNATLabSeed$' ./cmd/witan/ >/dev/null
space=$(cat "$work/a/space")

# Started with ip netns exec directly, which execs the command: $! is the
# process itself.
ip netns exec wl-relay "$work/witan" relay -listen /ip4/11.77.0.10/tcp/4001 -listen /ip4/11.77.0.10/udp/4001/quic-v1 \
	-key "$work/relay.key" -json >"$work/relay.out" 2>"$work/relay.err" &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/relay.out" ] && break; sleep 0.1; done
relay=$(grep -o '/ip4/11.77.0.10/tcp/4001/p2p/[A-Za-z0-9]*' "$work/relay.out" | head -1)
[ -n "$relay" ] || { cat "$work/relay.err"; echo "natlab: relay did not start"; exit 1; }

up() { # ns data extra...
	local ns=$1 data=$2; shift 2
	ip netns exec "$ns" "$work/witan" up -data "$data" -http 127.0.0.1:8030 -json -checkpoint-every 250ms "$@" \
		>"$data.out" 2>"$data.err" &
	pids+=($!)
}
# A node's log size (0 before its first checkpoint, which comes within
# 250 ms of its log growing), cheap to ask at any size; and its heads,
# which at 100k entries are megabytes, so they are compared once.
logsize() {
	local v
	v=$(nsx "$1" curl -s --max-time 5 http://127.0.0.1:8030/oth/v0/checkpoint?session="$space" 2>/dev/null |
		grep -o '"log_size":[0-9]*' | cut -d: -f2 || true)
	echo "${v:-0}"
}
# heads: a digest of a node's heads alone. GET /heads also labels them
# (finality, the session's labels), which a node just synced may give
# otherwise than A until a checkpoint covers its log: equal heads, not equal
# labels, is what says the two hold the same entries.
heads() {
	nsx "$1" curl -s --max-time 120 http://127.0.0.1:8030/oth/v0/heads?session="$space" 2>/dev/null |
		tr -d ' \n' | { grep -o '"heads":\[[^]]*\]' || true; } | md5sum | cut -c1-32
}

up wl-a "$work/a" -mdns=true -bootstrap "$relay" -discover "$space" -reachability private ${NATLAB_V:+-v}
for _ in $(seq 300); do [ "$(logsize wl-a)" -gt 0 ] && break; sleep 0.1; done
size=$(logsize wl-a)
[ "$size" -gt "$n" ] || { tail -n 5 "$work/a.out" "$work/a.err"; echo "natlab: A's log holds $size entries, want more than $n"; exit 1; }
want=$(heads wl-a)
[ "$want" != d41d8cd98f00b204e9800998ecf8427e ] || { echo "natlab: A did not answer its heads"; exit 1; }
aid=$(grep -o '"peer_id":"[A-Za-z0-9]*"' "$work/a.out" | head -1 | cut -d'"' -f4)
# A holds the session a while before B comes: by then it speaks DCUtR
# (the relay observed it at its NAT's public address).
for _ in $(seq 300); do grep -q '"hole_punching":true' "$work/a.out" && break; sleep 0.1; done
grep -q '"hole_punching":true' "$work/a.out" || { tail -n 5 "$work/a.out" "$work/a.err"; echo "natlab: A's hole punching did not start"; exit 1; }
# Bytes sent by the relay, and received by B's LAN from the segment
# (the wan side of its NAT), while B syncs.
bytes() { nsx "$1" cat "/sys/class/net/$2/statistics/$3"; }
relay0=$(bytes wl-relay eth0 tx_bytes)
b0=$(bytes wl-rb wan rx_bytes)

start=$(date +%s%N)
up wl-b "$work/b" -mdns=false -bootstrap "$relay" -discover "$space" -reachability private ${NATLAB_V:+-v}
limit=$([ "$mode" = cone ] && echo 120 || echo 600)
converged=""
while :; do
	ms=$((($(date +%s%N) - start) / 1000000))
	if [ "$(logsize wl-b)" = "$size" ]; then converged=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000))); break; fi
	if [ $ms -gt $((limit * 1000)) ]; then break; fi
	if [ $((ms / 200 % 50)) = 0 ]; then
		echo "  $((ms / 1000)) s: B $(nsx wl-b curl -s --max-time 2 http://127.0.0.1:8030/oth/v0/peers | grep -o '"pulls":\[[^]]*\]' | cut -c1-300)"
	fi
	sleep 0.2
done
relayKB=$((($(bytes wl-relay eth0 tx_bytes) - relay0) / 1024))
bKB=$((($(bytes wl-rb wan rx_bytes) - b0) / 1024))
peers=$(nsx wl-b curl -s --max-time 10 http://127.0.0.1:8030/oth/v0/peers)
echo "$peers" >"$work/b.peers"
# B's connections to A, from GET /peers.
toA=$(echo "$peers" | grep -o "\"id\":\"$aid\",\"addrs\":\[[^]]*\],\"conns\":\[[^]]*\]" | grep -o '"conns":.*' || true)
kinds=$(echo "$toA" | grep -o '"kind":"[a-z-]*"' | cut -d'"' -f4 | sort | tr '\n' ' ')
echo "natlab $mode: $n entries; B converged: ${converged:-NO (after ${limit}s)} s; B's connections to A: ${kinds:-none}"
echo "natlab $mode: while B synced, B's NAT received ${bKB} KiB from the segment, the relay sent ${relayKB} KiB"
echo "  B to A: $toA"

# mDNS on A's LAN, the DHT off on this node.
up wl-a2 "$work/a2" -mdns=true -session "$space" ${NATLAB_V:+-v}
t2=$(date +%s%N)
mdns=""
while :; do
	ms=$((($(date +%s%N) - t2) / 1000000))
	if [ "$(logsize wl-a2)" = "$size" ]; then mdns=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000))); break; fi
	if [ $ms -gt $((limit * 1000)) ]; then break; fi
	sleep 0.2
done
echo "natlab $mode: mDNS node on A's LAN (no DHT) converged: ${mdns:-NO} s"

fail=""
[ -n "$converged" ] || fail="$fail; B did not converge"
[ -n "$mdns" ] || fail="$fail; the mDNS node did not converge"
# Equal log sizes, and then equal heads: the same entries.
[ -z "$converged" ] || [ "$(heads wl-b)" = "$want" ] || fail="$fail; B's heads differ from A's"
[ -z "$mdns" ] || [ "$(heads wl-a2)" = "$want" ] || fail="$fail; the mDNS node's heads differ from A's"
case $mode in
cone)
	# Behind cone NATs DCUtR upgrades B's relayed connection to A, and
	# the pull waits for the direct connection: the entries do not cross
	# the relay (what the relay sends B is DHT, reservation and DCUtR
	# traffic, a small part of what B receives).
	case " $kinds " in *" hole-punched "*) ;; *) fail="$fail; no hole-punched connection from B to A" ;; esac
	[ $((relayKB * 4)) -lt "$bKB" ] || fail="$fail; the relay sent ${relayKB} KiB of the ${bKB} KiB B received"
	;;
symmetric)
	# A symmetric NAT maps each destination to a new port: the hole punch
	# cannot meet, and B converges through the relay.
	case " $kinds " in *" relayed "*) ;; *) fail="$fail; no relayed connection from B to A" ;; esac
	case " $kinds " in *" hole-punched "* | *" direct "*) fail="$fail; a direct connection through a symmetric NAT" ;; esac
	;;
esac
if [ -n "$fail" ]; then
	tail -n 5 "$work/b.err" "$work/a.err" "$work/a2.err" || true
	echo "natlab $mode: FAILED${fail}"
	exit 1
fi
echo "natlab $mode: ok"
