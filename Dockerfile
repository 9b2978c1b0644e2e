# The manager image: the static binary /manager on a distroless base, run as a non-root
# user, as openstack-operator runs every operator (command /manager; args
# --leader-elect --health-probe-bind-address=:8081 --metrics-bind-address=127.0.0.1:8080).
#   docker build -t keystone-operator:latest .      (or podman build)
# Without a registry or a container engine, hack/manager-image.sh builds this file with
# buildah on locally made bases of the same names (make manager-image, an OCI archive),
# which make e2e imports into the local cluster.
ARG GO_VERSION=1.26
FROM docker.io/library/golang:${GO_VERSION} AS builder
WORKDIR /workspace
COPY go.mod go.sum ./
COPY apis/go.mod apis/go.sum apis/
RUN go mod download
COPY apis/ apis/
COPY cmd/ cmd/
COPY config/rbac/ config/rbac/
COPY controllers/ controllers/
COPY internal/ internal/
COPY pkg/ pkg/
COPY templates/ templates/
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags=-s -o /manager ./cmd

FROM gcr.io/distroless/static:nonroot
COPY --from=builder /manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
