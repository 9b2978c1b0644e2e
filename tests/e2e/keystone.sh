#!/usr/bin/env bash
# Checks against what really runs in the e2e namespace, from the host: Keystone through
# its keystone-internal Service (kube-proxy routes the host to cluster IPs), MariaDB
# through kubectl exec. Usage: keystone.sh FUNCTION [ARGS]; kuttl sets NAMESPACE.
set -euo pipefail
admin_password=12345678 # config/samples/osp-secret.yaml
state=${TMPDIR:-/tmp}/keystone-e2e-$NAMESPACE
mkdir -p "$state"

fail() {
	echo "keystone.sh: $*" >&2
	exit 1
}

# url prints Keystone's v3 URL through the keystone-internal Service: by its cluster IP,
# or, when the KeystoneAPI serves HTTPS, by the Service's name (the certificate's), which
# kcurl resolves to that IP and verifies against the CA bundle.
url() {
	if tls; then
		echo "https://keystone-internal.$NAMESPACE.svc:5000/v3"
	else
		echo "http://$(cluster_ip):5000/v3"
	fi
}

cluster_ip() {
	local ip
	ip=$(kubectl -n "$NAMESPACE" get service keystone-internal -o jsonpath='{.spec.clusterIP}')
	[[ -n $ip ]] || fail "service keystone-internal has no cluster IP"
	echo "$ip"
}

# tls tells whether the namespace's KeystoneAPI serves HTTPS (a CA bundle was issued).
tls() { kubectl -n "$NAMESPACE" get secret combined-ca-bundle >/dev/null 2>&1; }

# ca_file writes the namespace's CA bundle to a file and prints its path.
ca_file() {
	kubectl -n "$NAMESPACE" get secret combined-ca-bundle -o jsonpath='{.data.tls-ca-bundle\.pem}' | base64 -d >"$state/ca.pem"
	echo "$state/ca.pem"
}

# kcurl is curl, verifying Keystone's certificate against the CA bundle when it serves HTTPS.
kcurl() {
	if tls; then
		curl --cacert "$(ca_file)" --resolve "keystone-internal.$NAMESPACE.svc:5000:$(cluster_ip)" "$@"
	else
		curl "$@"
	fi
}

# served_serial SERVICE prints the serial of the certificate Keystone serves for the
# Service's name (SNI), after checking it against the CA bundle.
served_serial() {
	local host=$1.$NAMESPACE.svc out
	out=$(openssl s_client -connect "$(kubectl -n "$NAMESPACE" get service "$1" -o jsonpath='{.spec.clusterIP}'):5000" \
		-servername "$host" -verify_hostname "$host" -CAfile "$(ca_file)" -verify_return_error </dev/null 2>/dev/null) ||
		fail "no verified TLS handshake with $host"
	openssl x509 -noout -serial <<<"$out" | cut -d= -f2
}

# secret_serial SECRET prints the serial of the certificate in the Secret SECRET.
secret_serial() {
	kubectl -n "$NAMESPACE" get secret "$1" -o jsonpath='{.data.tls\.crt}' | base64 -d | openssl x509 -noout -serial | cut -d= -f2
}

# token USER PASSWORD PROJECT issues a token (POST /v3/auth/tokens) and prints it.
token() {
	local body headers base
	base=$(url)
	body=$(printf '{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":"%s","domain":{"id":"default"},"password":"%s"}}},"scope":{"project":{"name":"%s","domain":{"id":"default"}}}}}' "$1" "$2" "$3")
	headers=$(mktemp)
	local code
	code=$(kcurl -s -o "$state/last-body" -D "$headers" -w '%{http_code}' -H 'Content-Type: application/json' -d "$body" "$base/auth/tokens")
	[[ $code == 201 ]] || fail "POST /v3/auth/tokens as $1: HTTP $code $(head -c 300 "$state/last-body")"
	tr -d '\r' <"$headers" | awk -F': ' 'tolower($1) == "x-subject-token" {print $2}'
	rm -f "$headers"
}

admin_token() { token admin "$admin_password" admin; }

# appcred_token SECRET issues a token with the application credential of the Secret
# SECRET (AC_ID, AC_SECRET) and prints it.
appcred_token() {
	local id secret body headers code
	id=$(kubectl -n "$NAMESPACE" get secret "$1" -o jsonpath='{.data.AC_ID}' | base64 -d)
	secret=$(kubectl -n "$NAMESPACE" get secret "$1" -o jsonpath='{.data.AC_SECRET}' | base64 -d)
	[[ -n $id && -n $secret ]] || fail "secret $1 holds no AC_ID and AC_SECRET"
	body=$(printf '{"auth":{"identity":{"methods":["application_credential"],"application_credential":{"id":"%s","secret":"%s"}}}}' "$id" "$secret")
	headers=$(mktemp)
	code=$(kcurl -s -o "$state/last-body" -D "$headers" -w '%{http_code}' -H 'Content-Type: application/json' -d "$body" "$(url)/auth/tokens")
	[[ $code == 201 ]] || fail "POST /v3/auth/tokens with application credential $id: HTTP $code $(head -c 300 "$state/last-body")"
	tr -d '\r' <"$headers" | awk -F': ' 'tolower($1) == "x-subject-token" {print $2}'
	rm -f "$headers"
}

# validate TOKEN checks TOKEN with GET /v3/auth/tokens and prints its lifetime in seconds.
validate() {
	local code auth
	auth=$(admin_token)
	code=$(kcurl -s -o "$state/last-body" -w '%{http_code}' -H "X-Auth-Token: $auth" -H "X-Subject-Token: $1" "$(url)/auth/tokens")
	[[ $code == 200 ]] || fail "GET /v3/auth/tokens: HTTP $code $(head -c 300 "$state/last-body")"
	python3 -c 'import json, sys, datetime as d
t = json.load(open(sys.argv[1]))["token"]
p = lambda s: d.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")
print(int((p(t["expires_at"]) - p(t["issued_at"])).total_seconds()))' "$state/last-body"
}

# get PATH prints the JSON answer to GET /v3/PATH, as admin. (The openstack client would
# follow the catalog to the Service DNS names, which the host cannot resolve.)
get() {
	local code auth
	auth=$(admin_token)
	code=$(kcurl -s -o "$state/last-body" -w '%{http_code}' -H "X-Auth-Token: $auth" "$(url)/$1")
	[[ $code == 200 ]] || fail "GET /v3/$1: HTTP $code $(head -c 300 "$state/last-body")"
	cat "$state/last-body"
}

# create_user NAME creates the user NAME in the default domain (POST /v3/users, as
# admin) and prints its ID.
create_user() {
	local code auth
	auth=$(admin_token)
	code=$(kcurl -s -o "$state/last-body" -w '%{http_code}' -H "X-Auth-Token: $auth" -H 'Content-Type: application/json' \
		-d "{\"user\":{\"name\":\"$1\",\"domain_id\":\"default\"}}" "$(url)/users")
	[[ $code == 201 ]] || fail "POST /v3/users $1: HTTP $code $(head -c 300 "$state/last-body")"
	py '[j["user"]["id"]]' <"$state/last-body"
}

# notified EVENT ID waits up to 60 s for the notification EVENT about the resource ID on
# the queue notifications.info of the KeystoneAPI's RabbitMQ, with the transport URL of
# status.transportURLSecret, read from inside a Keystone pod with its python3-amqp
# (the host does not resolve the cluster's names). Messages it reads are consumed.
notified() {
	local secret transport
	secret=$(kubectl -n "$NAMESPACE" get keystoneapi keystone -o jsonpath='{.status.transportURLSecret}')
	[[ -n $secret ]] || fail "KeystoneAPI keystone has no status.transportURLSecret"
	transport=$(kubectl -n "$NAMESPACE" get secret "$secret" -o jsonpath='{.data.transport_url}' | base64 -d)
	kubectl -n "$NAMESPACE" exec -i deploy/keystone -- python3 - "$transport" "$1" "$2" <<'PY'
import json, sys, time
from urllib.parse import urlsplit, unquote
import amqp

url, event, resource = sys.argv[1:4]
u = urlsplit(url)
conn = amqp.Connection(host="%s:%d" % (u.hostname, u.port or 5672), userid=unquote(u.username),
                       password=unquote(u.password), virtual_host=unquote(u.path[1:]) or "/")
conn.connect()
seen, deadline, channel = [], time.time() + 60, conn.channel()
while time.time() < deadline:
    try:
        m = channel.basic_get(queue="notifications.info", no_ack=True)
    except amqp.exceptions.NotFound:  # no notification sent yet: the queue comes with the first
        channel, m = conn.channel(), None
    if m is None:
        time.sleep(1)
        continue
    body = json.loads(m.body)
    msg = json.loads(body["oslo.message"]) if "oslo.message" in body else body
    seen.append(msg.get("event_type"))
    if msg.get("event_type") == event and resource in json.dumps(msg.get("payload")):
        print("%s about %s from %s" % (event, resource, msg.get("publisher_id")))
        sys.exit(0)
sys.exit("no %s about %s on notifications.info within 60 s; read: %s" % (event, resource, seen))
PY
}

# py EXPR evaluates EXPR on stdin's JSON (as j) and prints each item of the result.
py() { python3 -c 'import json, sys; j = json.load(sys.stdin); [print(x) for x in eval(sys.argv[1])]' "$1"; }

# service NAME prints "type enabled" of each service called NAME.
service() { get "services?name=$1" | py '["%s %s" % (s["type"], s["enabled"]) for s in j["services"]]'; }

# handshake SERVICE [OPENSSL_ARGS] tells whether an openssl client with OPENSSL_ARGS
# completes a TLS handshake with Keystone through the Service.
handshake() {
	local svc=$1
	shift
	openssl s_client -connect "$(kubectl -n "$NAMESPACE" get service "$svc" -o jsonpath='{.spec.clusterIP}'):5000" \
		-servername "$svc.$NAMESPACE.svc" "$@" </dev/null >/dev/null 2>&1
}

# links [CURL_ARGS] prints the links of Keystone's version document (GET /v3).
links() { kcurl -sf "$@" "$(url)" | py '[l["href"] for l in j["version"]["links"]]'; }

# endpoints NAME prints "interface url" of the service NAME's endpoints, sorted.
endpoints() {
	local id
	id=$(get "services?name=$1" | py '[s["id"] for s in j["services"]]')
	[[ -n $id ]] || return 0
	get "endpoints?service_id=$id" | py 'sorted("%s %s" % (e["interface"], e["url"]) for e in j["endpoints"])'
}

# roles USER PROJECT prints the names of USER's roles on PROJECT, sorted.
roles() {
	local user project
	user=$(get "users?name=$1" | py '[u["id"] for u in j["users"]]')
	project=$(get "projects?name=$2" | py '[p["id"] for p in j["projects"]]')
	get "role_assignments?user.id=$user&scope.project.id=$project&include_names=true" | py 'sorted(a["role"]["name"] for a in j["role_assignments"])'
}

# count KIND NAME prints how many KIND (services, users, ...) are called NAME.
count() { get "$1?name=$2" | py "[len(j['$1'])]"; }

# sql STATEMENT runs STATEMENT as root in the namespace's MariaDB.
sql() {
	kubectl -n "$NAMESPACE" exec deploy/mariadb-openstack -- sh -c 'mariadb -uroot -p"$MYSQL_ROOT_PASSWORD" -N -e "$0"' "$1"
}

# lacks PATTERN CMD... succeeds when no line CMD prints matches the extended regular
# expression PATTERN; it fails when CMD fails.
lacks() {
	local pattern=$1 out
	shift
	out=$("$@") || fail "failed: $*"
	! grep -qE -- "$pattern" <<<"$out"
}

# until SECONDS CMD... retries CMD every second.
until_() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < deadline)) || fail "still failing after the deadline: $*"
		sleep 1
	done
}

# pods prints "name:restarts" of the running Keystone pods that are not terminating.
pods() {
	kubectl -n "$NAMESPACE" get pods -l service=keystone --field-selector=status.phase=Running -o go-template='{{range .items}}{{if not .metadata.deletionTimestamp}}{{.metadata.name}}:{{(index .status.containerStatuses 0).restartCount}}{{"\n"}}{{end}}{{end}}' | sort
}

# stopped_cleanly fails when a pod of the namespace had a failed preStop hook (the
# kubelet's Warning FailedPreStopHook): every stop of an API pod runs the drain hook,
# which must end by itself before the kubelet's SIGTERM stops httpd.
stopped_cleanly() {
	local failed
	failed=$(kubectl -n "$NAMESPACE" get events --field-selector reason=FailedPreStopHook -o name) || fail "events not read"
	[[ -z $failed ]] || { kubectl -n "$NAMESPACE" get events --field-selector reason=FailedPreStopHook >&2; fail "a preStop hook failed"; }
}

# api_pods_gone succeeds when no API pod (the Deployment's, stopping ones included) is left.
api_pods_gone() {
	local left
	left=$(kubectl -n "$NAMESPACE" get pods -l service=keystone,owner=keystone -o name) || fail "pods not listed"
	[[ -z $left ]]
}

# restricted makes the namespace enforce Pod Security's restricted profile, as the first
# step of every scenario, and checks that the API server enforces it: a pod that may
# escalate is refused.
restricted() {
	kubectl label namespace "$NAMESPACE" --overwrite pod-security.kubernetes.io/enforce=restricted \
		pod-security.kubernetes.io/enforce-version=latest >/dev/null
	until_ 30 refused_escalation
}
refused_escalation() {
	local out
	if out=$(kubectl -n "$NAMESPACE" run psa-probe --image=localhost/keystone-stepwise/pause:1 --dry-run=server \
		--overrides='{"spec":{"containers":[{"name":"psa-probe","image":"localhost/keystone-stepwise/pause:1","securityContext":{"allowPrivilegeEscalation":true}}]}}' 2>&1); then
		fail "namespace $NAMESPACE admitted a pod that breaks the restricted profile: $out"
	fi
	# Anything else (the namespace's default ServiceAccount not made yet) is tried again.
	grep -q 'violates PodSecurity "restricted' <<<"$out" || { echo "keystone.sh: not yet refused by Pod Security: $out" >&2; return 1; }
}

# save NAME VALUE / saved NAME keep values between steps.
save() { echo "$2" >"$state/$1"; }
saved() { cat "$state/$1"; }

"$@"
