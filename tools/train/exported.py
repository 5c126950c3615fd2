"""Load an exported model directory (config.json + model.safetensors) of either
family the training tools make, by config.json's model_type, and describe its shape
in one vocabulary, so evaluate / analyze_heads / heldout_sample serve both models.
"""

import json
import os


def read_config(model_dir):
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        return json.load(f)


def shape(cfg):
    """context, layers, query heads, K/V heads and width of a GPT-2 or Llama config.json."""
    if cfg.get("model_type") == "llama":
        return {"context": cfg["max_position_embeddings"], "layers": cfg["num_hidden_layers"],
                "heads": cfg["num_attention_heads"], "kv_heads": cfg["num_key_value_heads"],
                "width": cfg["hidden_size"]}
    return {"context": cfg["n_positions"], "layers": cfg["n_layer"], "heads": cfg["n_head"],
            "kv_heads": cfg["n_head"], "width": cfg["n_embd"]}


def load_model(model_dir):
    """The float32 PyTorch model of an exported directory (model.py or llama_model.py)."""
    if read_config(model_dir).get("model_type") == "llama":
        from llama_model import load_exported
    else:
        from model import load_exported
    return load_exported(model_dir)


def dims(model):
    """(layers, query heads, context) of an in-memory model of either family."""
    c = model.cfg
    if hasattr(c, "num_hidden_layers"):
        return c.num_hidden_layers, c.num_attention_heads, c.max_position_embeddings
    return c.n_layer, c.n_head, c.n_positions
