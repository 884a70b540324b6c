#!/bin/sh
# Build the sidecar image from compose/Dockerfile.sidecar, tagged with observe's version.
#   tools/image.sh                                   # observe-sidecar:<version>
#   IMAGE=ghcr.io/you/observe-sidecar tools/image.sh && docker push ghcr.io/you/observe-sidecar:<version>
# Then point the kustomize components at it:
#   (cd deploy/kubernetes/components/vllm-logging && kustomize edit set image observe-sidecar=$IMAGE:<version>)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/pyproject.toml" | head -1)
image=${IMAGE:-observe-sidecar}
docker build -f "$root/compose/Dockerfile.sidecar" -t "$image:$version" "$root"
echo "$image:$version"
