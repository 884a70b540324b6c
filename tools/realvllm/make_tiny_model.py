"""Make a tiny random Llama model + tokenizer on this machine, for a real vLLM server in tests.

Why: the integration tests and recordings need a model vLLM can serve on 2 CPU cores in
seconds, and nothing may be downloaded. This writes a random `LlamaForCausalLM` (2 layers,
hidden 256, 4 heads, 2 KV heads, head_dim 64, vocab 4096, max_position_embeddings 2048, bf16,
~3.3 M parameters) and a byte-level BPE tokenizer trained on the Python standard library, plus
a minimal chat template. The output is random text; send `"ignore_eos": true` to get
`max_tokens` tokens back.

Run it with the vLLM venv's python (it needs torch, transformers, tokenizers):
    $VENV/bin/python tools/realvllm/make_tiny_model.py [OUTDIR]
OUTDIR defaults to $OBSERVE_TINY_MODEL or ~/.cache/observe/tiny-llama. An OUTDIR that already
holds a finished model (marker file) is left as it is, so calling this is cheap.
"""

from __future__ import annotations

import glob
import json
import os
import sys
import sysconfig
from pathlib import Path

MARKER = ".observe-tiny-model-ok"
SPECIALS = ["<s>", "</s>", "<unk>", "<pad>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)


def default_outdir() -> Path:
    env = os.environ.get("OBSERVE_TINY_MODEL")
    return Path(env) if env else Path.home() / ".cache" / "observe" / "tiny-llama"


def corpus_files(limit: int = 150) -> list[str]:
    """Python standard-library sources: text that is on every machine, used to train the BPE."""
    stdlib = sysconfig.get_paths()["stdlib"]
    return sorted(glob.glob(os.path.join(stdlib, "*.py")))[:limit]


def make_tokenizer(outdir: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=4096, special_tokens=SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train(corpus_files(), trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>"
    )
    fast.model_max_length = 2048
    fast.save_pretrained(str(outdir))
    (outdir / "chat_template.jinja").write_text(CHAT_TEMPLATE, encoding="utf-8")


def make_model(outdir: Path) -> None:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=4096,
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=64,
        max_position_embeddings=2048,
        bos_token_id=0,
        eos_token_id=1,
        pad_token_id=3,
        torch_dtype="bfloat16",
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    model.save_pretrained(str(outdir), safe_serialization=True)


def main(argv: list[str]) -> int:
    outdir = Path(argv[1]) if len(argv) > 1 else default_outdir()
    if (outdir / MARKER).exists():
        print(outdir)
        return 0
    outdir.mkdir(parents=True, exist_ok=True)
    make_tokenizer(outdir)
    make_model(outdir)
    cfg = json.loads((outdir / "config.json").read_text())
    assert cfg["max_position_embeddings"] == 2048, cfg
    (outdir / MARKER).write_text("ok\n")
    print(outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
