# the command that launched this vLLM (model and venv paths replaced)
/venv/bin/python -m vllm.entrypoints.openai.api_server --model /models/tiny-llama --served-model-name tiny-llama --host 127.0.0.1 --port 48507 --dtype bfloat16 --enforce-eager --block-size 32 --kv-cache-memory-bytes 64M --max-model-len 1024 --max-num-seqs 16
