"""components/vllm-logging: vLLM's own logging configuration writes the file the sidecar follows, and
the only change to the vLLM container is one env var and two volume mounts — on a plain Deployment
(overlays/cpu, overlays/gpu), production-stack's chart output, an llm-d decode Deployment, llm-d's
StatefulSet and multi-node LeaderWorkerSet (every pod template: worker, and leader where there is one)
and a KServe InferenceService predictor. The pieces agree: the sidecar follows the file logging.json names, on the
volume vLLM writes it to; the ConfigMap mounted where VLLM_LOGGING_CONFIG_PATH points holds logging.json;
the line format is vLLM's own (0.32.0 / 0.33.0 source) so that observe parses it unchanged."""

from __future__ import annotations

import copy
import json
import posixpath
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.k8skit import CHART_DEPLOYMENT, K8S_VERSION
from tests.services import have

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "kubernetes"
COMPONENT = K8S / "components" / "vllm-logging"
KSERVE = K8S / "components" / "vllm-logging-kserve"
LWS = K8S / "components" / "vllm-logging-lws"
LEADER = K8S / "components" / "vllm-logging-lws-leader"
DATA = ROOT / "tests" / "data"
CONFIG = json.loads((COMPONENT / "logging.json").read_text())
FORMATS = json.loads((DATA / "vllm-logging" / "formats.json").read_text())
ENV = "VLLM_LOGGING_CONFIG_PATH"
TOUCHED = ("env", "volumeMounts")  # the only keys of vLLM's container the component may change

needs_kubectl = pytest.mark.skipif(not have("kubectl"), reason="kubectl not installed")


def kustomize(path: Path) -> list[dict]:
    r = subprocess.run(["kubectl", "kustomize", str(path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return [d for d in yaml.safe_load_all(r.stdout) if d]


def with_component(tmp_path: Path, docs: list[dict], *components: Path) -> list[dict]:
    """`docs` as resources of a kustomization that lists the components (default: vllm-logging), in
    order, as a user's would."""
    components = components or (COMPONENT,)
    # the components and the image they name (../../image), laid out as in the tree
    for component in components:
        shutil.copytree(component, tmp_path / "components" / component.name)
    shutil.copytree(K8S / "image", tmp_path / "image")
    (tmp_path / "all.yaml").write_text(yaml.safe_dump_all(docs))
    (tmp_path / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {"resources": ["all.yaml"], "components": [f"components/{c.name}" for c in components]}
        )
    )
    return kustomize(tmp_path)


def file_handler() -> dict:
    (h,) = [h for h in CONFIG["handlers"].values() if h["class"] == "logging.handlers.RotatingFileHandler"]
    return h


def pod_parts(doc: dict, template: str = "workerTemplate") -> tuple[dict, dict, list[dict]]:
    """(pod-spec-like dict, vLLM container, its init containers) of a Deployment, a StatefulSet, an
    InferenceService or one pod template of a LeaderWorkerSet."""
    if doc["kind"] == "InferenceService":
        pred = doc["spec"]["predictor"]
        return pred, pred["model"], pred.get("initContainers", [])
    if doc["kind"] == "LeaderWorkerSet":
        spec = doc["spec"]["leaderWorkerTemplate"][template]["spec"]
    else:
        spec = doc["spec"]["template"]["spec"]
    (vllm,) = [c for c in spec["containers"] if c["name"] == "vllm"]
    return spec, vllm, spec.get("initContainers", [])


def check_wiring(before: dict, docs: list[dict], template: str = "workerTemplate") -> dict:
    """The component's promises on one workload (one pod template of a LeaderWorkerSet); returns the
    patched workload."""
    (after,) = [d for d in docs if d["kind"] == before["kind"]]
    _, vllm0, _ = pod_parts(before, template)
    spec, vllm, init = pod_parts(after, template)
    # vLLM's command, args, image, ports, probes, resources: all as they were
    assert {k: v for k, v in vllm.items() if k not in TOUCHED} == {
        k: v for k, v in vllm0.items() if k not in TOUCHED
    }
    assert vllm.get("command") == vllm0.get("command") and vllm.get("args") == vllm0.get("args")
    # one env var added, the others kept in order
    env0, mounts0 = vllm0.get("env", []), vllm0.get("volumeMounts", [])
    (added,) = [e for e in vllm["env"] if e not in env0]
    assert added["name"] == ENV and len(vllm["env"]) == len(env0) + 1 and all(e in vllm["env"] for e in env0)
    mounts = {m["name"]: m for m in vllm["volumeMounts"]}
    assert len(mounts) == len(mounts0) + 2 and all(m in vllm["volumeMounts"] for m in mounts0)
    volumes = {v["name"]: v for v in spec["volumes"]}
    # VLLM_LOGGING_CONFIG_PATH is logging.json of the ConfigMap the component generates
    cfg_dir, cfg_file = posixpath.split(added["value"])
    (cfg_mount,) = [m for m in mounts.values() if m["mountPath"] == cfg_dir]
    assert cfg_mount.get("readOnly") is True
    cm_name = volumes[cfg_mount["name"]]["configMap"]["name"]
    (cm,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == cm_name]
    assert json.loads(cm["data"][cfg_file]) == CONFIG
    # the file vLLM writes is on an emptyDir the sidecar mounts read-only, and it follows that file
    log_dir, _ = posixpath.split(file_handler()["filename"])
    (log_mount,) = [m for m in mounts.values() if m["mountPath"] == log_dir]
    assert "emptyDir" in volumes[log_mount["name"]] and not log_mount.get("readOnly")
    side = {c["name"]: c for c in init}["observe"]
    assert side["restartPolicy"] == "Always"
    assert side["args"][side["args"].index("--log") + 1] == file_handler()["filename"]
    (side_mount,) = [m for m in side["volumeMounts"] if m["name"] == log_mount["name"]]
    assert side_mount == {"name": log_mount["name"], "mountPath": log_dir, "readOnly": True}
    # every rotated generation fits the emptyDir
    size = volumes[log_mount["name"]]["emptyDir"]["sizeLimit"]
    assert size.endswith("Gi") and file_handler()["maxBytes"] * (file_handler()["backupCount"] + 1) <= int(
        size[:-2]
    ) * (1 << 30)
    return after


# ---------------------------------------------------------------- the four deployment shapes


@needs_kubectl
@pytest.mark.parametrize("overlay", ["cpu", "gpu"])
def test_overlays_add_only_the_env_var_and_mounts_to_the_plain_deployment(overlay: str, tmp_path: Path):
    import kubernetes_validate

    # the overlay rendered without the component: its own patches (args, resources, image) stay
    tree = tmp_path / "kubernetes"
    shutil.copytree(K8S, tree)
    kust = tree / "overlays" / overlay / "kustomization.yaml"
    spec = yaml.safe_load(kust.read_text())
    spec["components"].remove("../../components/vllm-logging")
    kust.write_text(yaml.safe_dump(spec))
    (plain,) = [d for d in kustomize(tree / "overlays" / overlay) if d["kind"] == "Deployment"]
    docs = kustomize(K8S / "overlays" / overlay)
    (after,) = [d for d in docs if d["kind"] == "Deployment"]
    check_wiring(plain, docs)
    kubernetes_validate.validate(after, K8S_VERSION, strict=True)


@needs_kubectl
def test_production_stack_chart_output_keeps_its_command(tmp_path: Path):
    import kubernetes_validate

    docs = with_component(tmp_path, [CHART_DEPLOYMENT])
    after = check_wiring(CHART_DEPLOYMENT, docs)
    kubernetes_validate.validate(after, K8S_VERSION, strict=True)


@needs_kubectl
def test_llm_d_decode_deployment_keeps_its_command_and_env(tmp_path: Path):
    import kubernetes_validate

    before = yaml.safe_load((DATA / "k8s" / "llm-d-decode.yaml").read_text())
    after = check_wiring(before, with_component(tmp_path, [before]))
    kubernetes_validate.validate(after, K8S_VERSION, strict=True)


@needs_kubectl
def test_kserve_predictor_keeps_its_args_and_env(tmp_path: Path):
    before = yaml.safe_load((DATA / "k8s" / "kserve-inferenceservice.yaml").read_text())
    after = check_wiring(before, with_component(tmp_path, [before], KSERVE))
    side = {c["name"]: c for c in after["spec"]["predictor"]["initContainers"]}["observe"]
    assert side["args"][side["args"].index("--vllm-url") + 1] == "http://127.0.0.1:8080"  # KServe's port
    # the one image name (deploy/kubernetes/image/image.yaml) reaches a custom resource's containers too
    tag = yaml.safe_load((K8S / "image" / "image.yaml").read_text())["imageTag"]
    assert side["image"] == f"{tag['newName']}:{tag['newTag']}"
    assert (
        after["spec"]["predictor"]["model"]["modelFormat"]
        == before["spec"]["predictor"]["model"]["modelFormat"]
    )
    # the predictor is a pod spec whose `model` is the serving container: as a Pod, it validates strictly
    import kubernetes_validate

    pred = copy.deepcopy(after["spec"]["predictor"])
    model = pred.pop("model")
    model.pop("modelFormat")  # KServe's own field, resolved to a runtime image by KServe
    container = {"name": "kserve-container", "image": "kserve/huggingfaceserver:v0.15.0", **model}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "qwen"},
        "spec": {**pred, "containers": [container]},
    }
    kubernetes_validate.validate(pod, K8S_VERSION, strict=True)


def validate_template_as_pod(lws: dict, template: str) -> None:
    """LeaderWorkerSet is a custom resource; each of its pod templates becomes a Pod as written, so
    it validates strictly as one."""
    import kubernetes_validate

    tmpl = lws["spec"]["leaderWorkerTemplate"][template]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {**tmpl.get("metadata", {}), "name": f"{lws['metadata']['name']}-0"},
        "spec": tmpl["spec"],
    }
    kubernetes_validate.validate(pod, K8S_VERSION, strict=True)


@needs_kubectl
def test_llm_d_release_with_a_leaderworkerset_gets_the_sidecar_on_every_vllm_pod(tmp_path: Path):
    """llm-d-modelservice's multi-node release (tests/data/platforms/llm-d.yaml: a LeaderWorkerSet for
    decode, a Deployment for prefill) in one kustomization with both components: both wired, and the
    LeaderWorkerSet's lists merged by name (its schema), not replaced, while the Deployment's merge as
    before (kustomize takes the custom schema for the whole build)."""
    import kubernetes_validate

    docs0 = list(yaml.safe_load_all((DATA / "platforms" / "llm-d.yaml").read_text()))
    docs = with_component(tmp_path, docs0, COMPONENT, LWS)
    by_kind = {d["kind"]: d for d in docs0}
    lws = check_wiring(by_kind["LeaderWorkerSet"], docs)
    # the workerTemplate makes every pod of a group here: no leaderTemplate appears
    assert set(lws["spec"]["leaderWorkerTemplate"]) == set(
        by_kind["LeaderWorkerSet"]["spec"]["leaderWorkerTemplate"]
    )
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    validate_template_as_pod(lws, "workerTemplate")
    dep = check_wiring(by_kind["Deployment"], docs)
    kubernetes_validate.validate(dep, K8S_VERSION, strict=True)


@needs_kubectl
def test_a_leaderworkerset_with_a_leader_template_gets_it_wired_by_the_leader_component(tmp_path: Path):
    (lws0,) = [
        d
        for d in yaml.safe_load_all((DATA / "platforms" / "llm-d.yaml").read_text())
        if d["kind"] == "LeaderWorkerSet"
    ]
    lwt = lws0["spec"]["leaderWorkerTemplate"]
    lwt["leaderTemplate"] = copy.deepcopy(lwt["workerTemplate"])
    lwt["leaderTemplate"]["spec"]["containers"][0]["args"] = ["--headless"]  # the leader's own pod spec
    docs = with_component(tmp_path, [lws0], COMPONENT, LWS, LEADER)
    for template in ("leaderTemplate", "workerTemplate"):
        lws = check_wiring(lws0, docs, template)
        validate_template_as_pod(lws, template)
    tag = yaml.safe_load((K8S / "image" / "image.yaml").read_text())["imageTag"]
    side = {c["name"]: c for c in pod_parts(lws, "leaderTemplate")[2]}["observe"]
    assert side["image"] == f"{tag['newName']}:{tag['newTag']}"


@needs_kubectl
def test_llm_d_decode_statefulset_keeps_its_command_and_env(tmp_path: Path):
    import kubernetes_validate

    before = yaml.safe_load((DATA / "k8s" / "llm-d-decode-statefulset.yaml").read_text())
    after = check_wiring(before, with_component(tmp_path, [before]))
    assert {k: v for k, v in after["spec"].items() if k != "template"} == {
        k: v for k, v in before["spec"].items() if k != "template"
    }
    kubernetes_validate.validate(after, K8S_VERSION, strict=True)


def test_leaderworkerset_patches_are_the_pod_patch_on_its_templates():
    pod = yaml.safe_load((COMPONENT / "pod.yaml").read_text())["spec"]["template"]
    worker = yaml.safe_load((LWS / "lws.yaml").read_text())["spec"]["leaderWorkerTemplate"]
    leader = yaml.safe_load((LEADER / "leader.yaml").read_text())["spec"]["leaderWorkerTemplate"]
    assert worker == {"workerTemplate": pod} and leader == {"leaderTemplate": pod}


@needs_kubectl
def test_the_plain_component_leaves_a_leaderworkerset_alone(tmp_path: Path):
    """Without components/vllm-logging-lws a LeaderWorkerSet is untouched (not half-patched)."""
    docs0 = list(yaml.safe_load_all((DATA / "platforms" / "llm-d.yaml").read_text()))
    (lws,) = [d for d in with_component(tmp_path, docs0) if d["kind"] == "LeaderWorkerSet"]
    assert lws == [d for d in docs0 if d["kind"] == "LeaderWorkerSet"][0]


@needs_kubectl
def test_a_workload_the_targets_miss_is_left_alone(tmp_path: Path):
    other = copy.deepcopy(CHART_DEPLOYMENT)
    other["metadata"]["name"] = "redis"
    (after,) = [d for d in with_component(tmp_path, [other]) if d["kind"] == "Deployment"]
    assert after == other


def test_kserve_component_has_the_same_logging_json():
    assert (KSERVE / "logging.json").read_bytes() == (COMPONENT / "logging.json").read_bytes()


@needs_kubectl
def test_the_kserve_component_leaves_other_kinds_to_the_other_component(tmp_path: Path):
    """Nothing but InferenceServices is patched by it."""
    (after,) = [d for d in with_component(tmp_path, [CHART_DEPLOYMENT], KSERVE) if d["kind"] == "Deployment"]
    assert pod_parts(after)[1] == pod_parts(CHART_DEPLOYMENT)[1]


def test_kserve_patch_is_the_pod_patch_on_the_predictor():
    pod = yaml.safe_load((COMPONENT / "pod.yaml").read_text())["spec"]["template"]["spec"]
    pred = yaml.safe_load((KSERVE / "kserve.yaml").read_text())["spec"]["predictor"]
    assert pred["volumes"] == pod["volumes"]
    vllm = {k: v for k, v in pod["containers"][0].items() if k != "name"}
    assert pred["model"] == vllm
    side_pod, side_ks = pod["initContainers"][0], pred["initContainers"][0]
    differ = {k for k in side_pod if side_pod[k] != side_ks[k]}
    assert differ == {"args"}
    i = side_pod["args"].index("--vllm-url") + 1
    assert side_pod["args"][:i] + side_pod["args"][i + 1 :] == side_ks["args"][:i] + side_ks["args"][i + 1 :]


# ---------------------------------------------------------------- logging.json


def test_logging_json_keeps_vllms_format_on_stdout_and_in_the_file():
    v = FORMATS["vllm"]
    fmt = CONFIG["formatters"]["vllm"]
    assert fmt["()"] == v["formatter"]
    assert (fmt["format"], fmt["datefmt"]) == (v["format"], v["datefmt"])
    handlers = CONFIG["handlers"]
    assert handlers[v["handler"]] == {
        "class": "logging.StreamHandler",
        "formatter": "vllm",
        "level": "INFO",
        "stream": "ext://sys.stdout",  # vLLM's default VLLM_LOGGING_STREAM: `kubectl logs` as before
    }
    assert file_handler()["formatter"] == "vllm"
    assert CONFIG["loggers"][v["logger"]]["handlers"] == [v["handler"], "vllm_file"]
    assert CONFIG["loggers"][v["logger"]]["propagate"] is False


def test_logging_json_configures_uvicorn_as_uvicorn_does():
    """vLLM 0.32+ hands this file to uvicorn as its log_config: without uvicorn's loggers in it, the
    access lines would vanish from stdout."""
    u = FORMATS["uvicorn"]
    f = CONFIG["formatters"]
    assert f["default"]["fmt"] == u["default"] and f["access"]["fmt"] == u["access"]
    assert CONFIG["loggers"]["uvicorn"]["handlers"] == ["default"]
    assert CONFIG["loggers"]["uvicorn.access"]["handlers"] == ["access"]
    assert CONFIG["handlers"]["default"]["stream"] == "ext://sys.stderr"
    assert CONFIG["handlers"]["access"]["stream"] == "ext://sys.stdout"


def test_one_file_handler_per_process():
    """Two handlers on one file in one process would rotate it under each other."""
    files = [h["filename"] for h in CONFIG["handlers"].values() if "filename" in h]
    assert len(files) == len(set(files)) == 1
