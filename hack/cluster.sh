#!/usr/bin/env bash
# A real single-node Kubernetes as plain processes on this machine: etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy and
# CoreDNS, with Debian's containerd, runc and CNI bridge.
#   cluster.sh up      start it (or what of it is not running) and print the kubeconfig
#   cluster.sh down    stop exactly what up started and restore the host: processes,
#                      containers, pod network namespaces, mounts, iptables chains, the
#                      bridge, sysctls. Cluster state (etcd, images) stays for the next up.
#   cluster.sh purge   down, then remove the cluster's state too
#   cluster.sh status  the processes and the node
#   cluster.sh images  start containerd and build and import the images only
#   cluster.sh import OCI_ARCHIVE  import an image archive into the running cluster
# Binaries come from hack/k8s-bins.sh (ENVTEST_BINS, NODE_BINS); images from
# hack/cluster-images.sh. Needs root (it runs a kubelet).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dir=${CLUSTER_DIR:-/var/lib/keystone-stepwise-cluster}
# Defaults: the newest builds in the repository's bin/ (the Makefile passes its own).
envtest_bins=${ENVTEST_BINS:-$(ls -d "$here"/../bin/k8s-*-etcd-* 2>/dev/null | tail -n 1)}
node_bins=${NODE_BINS:-$(ls -d "$here"/../bin/node-*-coredns-* 2>/dev/null | tail -n 1)}
node=${CLUSTER_NODE:-stepwise-node}
node_ip=10.244.0.1 # the CNI bridge's address: pods reach the API server and DNS there
pod_cidr=10.244.0.0/24
service_cidr=10.96.0.0/16
bridge=cni0
kubeconfig=$dir/admin.kubeconfig
containerd_sock=$dir/containerd/containerd.sock
netns_dir=/var/run/netns
# The host settings up changes (the kubelet sets the vm and kernel ones), restored by down.
sysctls=(net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables vm.overcommit_memory vm.panic_on_oom
	kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes)
# In stop order.
components=(kube-proxy coredns kubelet kube-scheduler kube-controller-manager kube-apiserver containerd etcd)

log() { echo "cluster: $*" >&2; }
die() {
	log "$*"
	exit 1
}

pidfile() { echo "$dir/run/$1.pid"; }
running() {
	local pid
	pid=$(cat "$(pidfile "$1")" 2>/dev/null) && [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null
}

# start NAME CMD... runs CMD in its own session, logging to logs/NAME.log.
start() {
	local name=$1
	shift
	running "$name" && return 0
	setsid "$@" >>"$dir/logs/$name.log" 2>&1 </dev/null &
	echo $! >"$(pidfile "$name")"
}

stop() {
	local name=$1 pid
	pid=$(cat "$(pidfile "$name")" 2>/dev/null) || return 0
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$(pidfile "$name")"
}

# wait_for WHAT SECONDS CMD... retries CMD every 0.2 s.
wait_for() {
	local what=$1 limit=$2
	shift 2
	local deadline=$((SECONDS + limit))
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || die "$what not ready after $limit s (logs in $dir/logs)"
		sleep 0.2
	done
}

# write FILE writes stdin to FILE only when it differs: kube-proxy exits when its
# configuration file is rewritten.
write() {
	local tmp
	tmp=$(mktemp)
	cat >"$tmp"
	if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv "$tmp" "$1"; fi
}

kubectl_() { "$envtest_bins/kubectl" --kubeconfig "$kubeconfig" "$@"; }

pki() {
	local p=$dir/pki
	mkdir -p "$p"
	[[ -s $p/ca.crt ]] && return 0
	log "creating certificates"
	openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=keystone-stepwise-cluster-ca" \
		-keyout "$p/ca.key" -out "$p/ca.crt" 2>/dev/null
	openssl genrsa -out "$p/sa.key" 2048 2>/dev/null
	openssl rsa -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
	# cert NAME SUBJECT [SANS]
	cert() {
		openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$p/$1.key" -out "$p/$1.csr" 2>/dev/null
		local ext=$p/$1.ext
		if [[ -n ${3:-} ]]; then
			printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$3" >"$ext"
		else
			printf 'extendedKeyUsage=clientAuth\n' >"$ext"
		fi
		openssl x509 -req -in "$p/$1.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial -days 3650 \
			-extfile "$ext" -out "$p/$1.crt" 2>/dev/null
		rm -f "$p/$1.csr" "$ext"
	}
	cert apiserver "/CN=kube-apiserver" \
		"IP:$node_ip,IP:10.96.0.1,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
	cert admin "/O=system:masters/CN=kubernetes-admin"
	cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
	cert kubelet "/O=system:nodes/CN=system:node:$node" "IP:$node_ip,DNS:$node"
	chmod 0600 "$p"/*.key
}

kubeconfig_for() { # kubeconfig_for NAME CERT
	write "$dir/$1.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: keystone-stepwise
  cluster: {server: "https://$node_ip:6443", certificate-authority: "$dir/pki/ca.crt"}
users:
- name: $2
  user: {client-certificate: "$dir/pki/$2.crt", client-key: "$dir/pki/$2.key"}
contexts:
- name: keystone-stepwise
  context: {cluster: keystone-stepwise, user: $2}
current-context: keystone-stepwise
YAML
}

# containerd_up starts containerd with the CRI and CNI configuration of the node.
containerd_up() {
	mkdir -p "$dir"/{run,logs,cni/net.d,cni/ipam,containerd/root,containerd/state}
	write "$dir/containerd/config.toml" <<TOML
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
[grpc]
  address = "$containerd_sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/keystone-stepwise/pause:1"
  # This machine refuses a negative oom_score_adj (no CAP_SYS_RESOURCE).
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/cni/net.d"
TOML
	write "$dir/cni/net.d/10-stepwise.conflist" <<JSON
{"cniVersion": "0.4.0", "name": "keystone-stepwise", "plugins": [
  {"type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": true, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$dir/cni/ipam", "ranges": [[{"subnet": "$pod_cidr", "gateway": "$node_ip"}]],
            "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
JSON
	start containerd containerd --config "$dir/containerd/config.toml"
	wait_for containerd 30 ctr --address "$containerd_sock" version
}

# images builds (cached) and imports the node's images.
images() {
	[[ -x $node_bins/pause ]] || die "set NODE_BINS (make cluster-up does)"
	"$here/cluster-images.sh" "$containerd_sock" "$node_bins/pause"
}

# host_up prepares the host: sysctls (remembered for down) and the CNI bridge with the node address.
host_up() {
	# Remember the host's settings once, before the first change, for down.
	if [[ ! -s $dir/host.sysctl ]]; then
		local k v
		for k in "${sysctls[@]}"; do
			v=$(sysctl -n "$k" 2>/dev/null) && echo "$k=$v"
		done >"$dir/host.sysctl"
	fi
	sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
	if ! ip link show "$bridge" >/dev/null 2>&1; then
		ip link add "$bridge" type bridge
		touch "$dir/run/bridge-created"
	fi
	ip addr replace "$node_ip/24" dev "$bridge"
	ip link set "$bridge" up
}

up() {
	[[ $(id -u) -eq 0 ]] || die "needs root: it runs a kubelet, containerd and iptables"
	[[ -x $envtest_bins/kube-apiserver && -x $node_bins/kubelet ]] || die "set ENVTEST_BINS and NODE_BINS (make cluster-up does)"
	local t0=$SECONDS
	mkdir -p "$dir"/{run,logs,etcd,cni/net.d,cni/ipam,kubelet,containerd/root,containerd/state}
	host_up
	pki
	kubeconfig_for admin admin
	kubeconfig_for kubelet kubelet

	control_plane_up
	containerd_up
	images
	wait_for kube-apiserver 60 kubectl_ get --raw /readyz
	controllers_up
	kubelet_up
	proxy_up
	dns_up
	wait_for "node $node" 120 kubectl_ wait --for=condition=Ready "node/$node" --timeout=1s
	wait_for coredns 30 curl -sf http://127.0.0.1:18181/ready
	log "ready in $((SECONDS - t0)) s"
	echo "$kubeconfig"
}

# control_plane_up starts etcd and kube-apiserver.
control_plane_up() {
	start etcd "$envtest_bins/etcd" --data-dir "$dir/etcd" --listen-client-urls http://127.0.0.1:12379 \
		--advertise-client-urls http://127.0.0.1:12379 --listen-peer-urls http://127.0.0.1:12380 \
		--listen-metrics-urls http://127.0.0.1:12381
	start kube-apiserver "$envtest_bins/kube-apiserver" --etcd-servers http://127.0.0.1:12379 \
		--bind-address "$node_ip" --advertise-address "$node_ip" --secure-port 6443 \
		--service-cluster-ip-range "$service_cidr" --allow-privileged=true --authorization-mode Node,RBAC \
		--client-ca-file "$dir/pki/ca.crt" --tls-cert-file "$dir/pki/apiserver.crt" --tls-private-key-file "$dir/pki/apiserver.key" \
		--kubelet-client-certificate "$dir/pki/apiserver-kubelet-client.crt" --kubelet-client-key "$dir/pki/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority "$dir/pki/ca.crt" --kubelet-preferred-address-types InternalIP \
		--service-account-key-file "$dir/pki/sa.pub" --service-account-signing-key-file "$dir/pki/sa.key" \
		--service-account-issuer https://kubernetes.default.svc.cluster.local
}

# controllers_up starts kube-controller-manager and kube-scheduler.
controllers_up() {
	start kube-controller-manager "$node_bins/kube-controller-manager" --kubeconfig "$kubeconfig" \
		--authentication-kubeconfig "$kubeconfig" --authorization-kubeconfig "$kubeconfig" \
		--bind-address 127.0.0.1 --secure-port 10257 --leader-elect=false --use-service-account-credentials \
		--service-account-private-key-file "$dir/pki/sa.key" --root-ca-file "$dir/pki/ca.crt" \
		--cluster-signing-cert-file "$dir/pki/ca.crt" --cluster-signing-key-file "$dir/pki/ca.key" \
		--service-cluster-ip-range "$service_cidr" --controllers '*,-nodeipam,-cloud-node-lifecycle'
	start kube-scheduler "$node_bins/kube-scheduler" --kubeconfig "$kubeconfig" \
		--authentication-kubeconfig "$kubeconfig" --authorization-kubeconfig "$kubeconfig" \
		--bind-address 127.0.0.1 --secure-port 10259 --leader-elect=false
}

kubelet_up() {
	write "$dir/kubelet/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $node_ip
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: "$dir/pki/ca.crt"}
authorization: {mode: AlwaysAllow}
tlsCertFile: "$dir/pki/kubelet.crt"
tlsPrivateKeyFile: "$dir/pki/kubelet.key"
containerRuntimeEndpoint: "unix://$containerd_sock"
cgroupDriver: cgroupfs
# This machine refuses a negative oom_score_adj.
oomScoreAdj: 0
failSwapOn: false
clusterDomain: cluster.local
clusterDNS: [$node_ip]
resolvConf: /etc/resolv.conf
podCIDR: $pod_cidr
maxPods: 60
# Imported images cannot be pulled again: never collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
serializeImagePulls: false
YAML
	start kubelet "$node_bins/kubelet" --config "$dir/kubelet/config.yaml" --kubeconfig "$dir/kubelet.kubeconfig" \
		--root-dir "$dir/kubelet" --hostname-override "$node" --node-ip "$node_ip"
}

proxy_up() {
	write "$dir/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$kubeconfig"}
mode: iptables
clusterCIDR: $pod_cidr
hostnameOverride: $node
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# Leave the host's conntrack and route_localnet sysctls alone.
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false}
YAML
	start kube-proxy "$node_bins/kube-proxy" --config "$dir/kube-proxy.yaml"
}

dns_up() {
	write "$dir/Corefile" <<COREFILE
.:53 {
    bind $node_ip
    errors
    health 127.0.0.1:18080
    ready 127.0.0.1:18181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $kubeconfig keystone-stepwise
        pods insecure
    }
    cache 30
}
COREFILE
	start coredns "$node_bins/coredns" -conf "$dir/Corefile"
}

# The pods' network namespaces, containers and mounts go with the node.
teardown_pods() {
	if running containerd; then
		local ctr=(ctr --address "$containerd_sock" -n k8s.io) id
		for id in $("${ctr[@]}" tasks ls -q 2>/dev/null); do
			"${ctr[@]}" tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
		done
		for id in $("${ctr[@]}" tasks ls -q 2>/dev/null); do
			for _ in $(seq 50); do "${ctr[@]}" tasks delete "$id" >/dev/null 2>&1 && break || sleep 0.1; done
		done
		for id in $("${ctr[@]}" containers ls -q 2>/dev/null); do
			"${ctr[@]}" containers delete "$id" >/dev/null 2>&1 || true
		done
	fi
	pkill -KILL -f "containerd-shim-runc-v2 .*-address $containerd_sock" 2>/dev/null || true
	local ns
	for ns in "$netns_dir"/cni-*; do
		[[ -e $ns ]] && ip netns delete "$(basename "$ns")" 2>/dev/null || true
	done
	rm -rf "$dir/cni/ipam"/* /var/lib/cni/results/keystone-stepwise-* 2>/dev/null || true
	# Mounts under the cluster's directories, deepest first.
	local m
	awk -v d="$dir/" '$2 ~ "^"d {print $2}' /proc/mounts | sort -r | while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
}

# The chains kube-proxy, the kubelet and the CNI plugins created, and the rules that
# jump to them; every other rule stays as it was.
restore_iptables() {
	local save restore tool
	for tool in iptables ip6tables; do
		save=$tool-save
		restore=$tool-restore
		command -v "$save" >/dev/null || continue
		if "$save" | grep -qE '(KUBE-|CNI-)'; then
			"$save" | grep -vE '(KUBE-|CNI-)' | "$restore"
		fi
	done
}

host_down() {
	restore_iptables
	if [[ -e $dir/run/bridge-created ]]; then
		ip link delete "$bridge" 2>/dev/null || true
		rm -f "$dir/run/bridge-created"
	fi
	if [[ -s $dir/host.sysctl ]]; then
		local kv
		while read -r kv; do sysctl -qw "$kv" || true; done <"$dir/host.sysctl"
		rm -f "$dir/host.sysctl"
	fi
}

down() {
	[[ -d $dir ]] || return 0
	local c
	for c in "${components[@]:0:3}"; do stop "$c"; done
	teardown_pods
	for c in "${components[@]:3}"; do stop "$c"; done
	teardown_pods
	host_down
	[[ ${1:-} == purge ]] || log "stopped; state kept in $dir (cluster.sh purge removes it)"
}

status() {
	local c
	for c in "${components[@]}"; do
		if running "$c"; then echo "$c running (pid $(cat "$(pidfile "$c")"))"; else echo "$c stopped"; fi
	done
	running kube-apiserver && kubectl_ get nodes -o wide
}

case ${1:-} in
up) up ;;
down) down ;;
purge)
	down purge
	rm -rf "$dir"
	log "stopped; state removed"
	;;
status) status ;;
images)
	containerd_up
	images
	;;
import)
	archive=${2:?usage: cluster.sh import OCI_ARCHIVE}
	running containerd || die "containerd is not running: cluster.sh up first"
	ctr --address "$containerd_sock" -n k8s.io images import "$archive" >/dev/null
	log "imported $archive"
	;;
*)
	echo "usage: cluster.sh up|down|purge|status|images|import OCI_ARCHIVE" >&2
	exit 2
	;;
esac
