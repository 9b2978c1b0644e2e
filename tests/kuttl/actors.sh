#!/usr/bin/env bash
# The kuttl control plane has no nodes and no other operators: nothing runs pods,
# Jobs or Deployments, and no mariadb-operator or infra-operator answers. Each function
# plays one of those actors in the open, writing exactly the status it would write.
# Usage: actors.sh FUNCTION [ARGS]; kuttl sets NAMESPACE and KUBECONFIG.
set -euo pipefail
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
# exists waits up to 30 s for KIND NAME to exist (the operator creates it).
exists() {
	for _ in $(seq 150); do
		kubectl -n "$NAMESPACE" get "$1" "$2" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "actors: $1 $2 did not appear" >&2
	return 1
}

ready_status() {
	printf '{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Ready","message":"Setup complete","lastTransitionTime":"%s"}]%s}}' "$now" "${1:-}"
}

# database_ready plays mariadb-operator: the MariaDBDatabase and MariaDBAccount are
# Ready and the Galera instance INSTANCE (default openstack) publishes its Service.
database_ready() {
	local instance=${1:-openstack}
	exists mariadbdatabase keystone
	exists mariadbaccount keystone
	kubectl -n "$NAMESPACE" patch mariadbdatabase keystone --subresource=status --type=merge -p "$(ready_status)"
	kubectl -n "$NAMESPACE" patch mariadbaccount keystone --subresource=status --type=merge -p "$(ready_status)"
	kubectl -n "$NAMESPACE" create service clusterip "$instance" --tcp=3306:3306 --dry-run=client -o yaml |
		kubectl label --local --overwrite -f - app=mariadb cr="mariadb-$instance" -o yaml | kubectl -n "$NAMESPACE" apply -f -
}

# memcached_ready creates the Memcached NAME (default memcached), as a user would, and
# plays infra-operator: it is Ready with one server.
memcached_ready() {
	local name=${1:-memcached}
	kubectl -n "$NAMESPACE" apply -f - <<YAML
apiVersion: memcached.openstack.org/v1beta1
kind: Memcached
metadata: {name: $name}
spec: {replicas: 1, containerImage: quay.io/podified-antelope-centos9/openstack-memcached:current-podified}
YAML
	kubectl -n "$NAMESPACE" patch memcached "$name" --subresource=status --type=merge \
		-p "$(ready_status ",\"readyCount\":1,\"serverList\":[\"$name-0.$name.$NAMESPACE.svc:11211\"]")"
}

# transporturl_ready plays infra-operator: the TransportURL NAME is Ready and its Secret
# holds the URL of the cluster it names.
transporturl_ready() {
	local name=$1 cluster secret=rabbitmq-transport-url-$1
	exists transporturl "$name"
	cluster=$(kubectl -n "$NAMESPACE" get transporturl "$name" -o jsonpath='{.spec.rabbitmqClusterName}')
	kubectl -n "$NAMESPACE" create secret generic "$secret" \
		--from-literal=transport_url="rabbit://default_user:kuttl@$cluster.$NAMESPACE.svc:5672/?ssl=1" --from-literal=quorumqueues=true \
		--dry-run=client -o yaml | kubectl -n "$NAMESPACE" apply -f -
	kubectl -n "$NAMESPACE" patch transporturl "$name" --subresource=status --type=merge -p "$(ready_status ",\"secretName\":\"$secret\"")"
}

# job_succeeded plays the Job controller: Job NAME completed.
job_succeeded() {
	exists job "$1"
	kubectl -n "$NAMESPACE" patch job "$1" --subresource=status --type=merge -p "{\"status\":{\"startTime\":\"$now\",\"completionTime\":\"$now\",\"succeeded\":1,\"conditions\":[{\"type\":\"SuccessCriteriaMet\",\"status\":\"True\",\"lastTransitionTime\":\"$now\"},{\"type\":\"Complete\",\"status\":\"True\",\"lastTransitionTime\":\"$now\"}]}}"
}

# job_failed plays the Job controller and kubelet: Job NAME exhausted its retries; its
# last pod's container exited 1 with MESSAGE.
job_failed() {
	local name=$1 message=$2
	exists job "$name"
	kubectl -n "$NAMESPACE" apply -f - <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $name-attempt4, labels: {job-name: $name}}
spec: {restartPolicy: Never, containers: [{name: job, image: job}]}
YAML
	kubectl -n "$NAMESPACE" patch pod "$name-attempt4" --subresource=status --type=merge -p "{\"status\":{\"containerStatuses\":[{\"name\":\"job\",\"image\":\"job\",\"imageID\":\"\",\"ready\":false,\"restartCount\":0,\"state\":{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\",\"message\":\"$message\"}}}]}}"
	kubectl -n "$NAMESPACE" patch job "$name" --subresource=status --type=merge -p "{\"status\":{\"startTime\":\"$now\",\"failed\":4,\"conditions\":[{\"type\":\"FailureTarget\",\"status\":\"True\",\"reason\":\"BackoffLimitExceeded\",\"message\":\"Job has reached the specified backoff limit\",\"lastTransitionTime\":\"$now\"},{\"type\":\"Failed\",\"status\":\"True\",\"reason\":\"BackoffLimitExceeded\",\"message\":\"Job has reached the specified backoff limit\",\"lastTransitionTime\":\"$now\"}]}}"
}

# rolled_out plays the Deployment controller and kubelet: Deployment NAME has READY
# ready replicas of its current spec.
rolled_out() {
	local name=$1 ready=$2 gen
	exists deployment "$name"
	gen=$(kubectl -n "$NAMESPACE" get deployment "$name" -o jsonpath='{.metadata.generation}')
	kubectl -n "$NAMESPACE" patch deployment "$name" --subresource=status --type=merge -p "{\"status\":{\"observedGeneration\":$gen,\"replicas\":$ready,\"readyReplicas\":$ready,\"updatedReplicas\":$ready,\"availableReplicas\":$ready}}"
}

"$@"
