#!/bin/sh
# Helm post-renderer for production-stack (and llm-d's modelservice chart): Helm's rendered
# manifests on stdin, the same with deploy/kubernetes/components/vllm-logging applied on stdout.
# Every vLLM Deployment of the chart (<release>-<model>-deployment-vllm, container `vllm`) gets
# VLLM_LOGGING_CONFIG_PATH, the two mounts and the observe sidecar; its command is left alone.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/components"  # the component and the image it names (../../image), as laid out in the tree
cp -R "$here/../../kubernetes/components/vllm-logging" "$dir/components/vllm-logging"
cp -R "$here/../../kubernetes/image" "$dir/image"
cat > "$dir"/all.yaml
cat > "$dir"/kustomization.yaml <<KUST
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - all.yaml
components:
  - components/vllm-logging
KUST
kubectl kustomize "$dir"
