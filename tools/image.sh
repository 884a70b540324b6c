#!/bin/sh
# Build the sidecar image from compose/Dockerfile.sidecar, tagged with observe's version.
#   tools/image.sh                                   # observe-sidecar:<version>
#   IMAGE=ghcr.io/you/observe-sidecar tools/image.sh && docker push ghcr.io/you/observe-sidecar:<version>
# Then point the manifests at it: newName in deploy/kubernetes/image/image.yaml (the one place the
# components name it; docs/kubernetes.md). Releases: .github/workflows/release.yml (amd64 + arm64).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/pyproject.toml" | head -1)
image=${IMAGE:-observe-sidecar}
docker build -f "$root/compose/Dockerfile.sidecar" -t "$image:$version" "$root"
echo "$image:$version"
