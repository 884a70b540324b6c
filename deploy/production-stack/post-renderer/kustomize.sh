#!/bin/sh
# Helm post-renderer: Helm's rendered manifests on stdin, the patched ones on stdout.
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$(dirname "$0")"/kustomization.yaml "$(dirname "$0")"/sidecar.yaml "$(dirname "$0")"/tee-command.yaml "$dir"/
cat > "$dir"/all.yaml
kubectl kustomize "$dir"
