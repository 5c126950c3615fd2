"""Train the small GPT-2 on the Brown corpus token stream (single CPU thread).

Usage: train.py [--build DIR] [--steps N] ...   (defaults = the shipped model's phase 1;
run_all.sh gives phase 2's flags)

Reproducibility: the run length is a fixed number of optimizer steps (not a
time limit), all randomness comes from fixed seeds, torch runs with
deterministic algorithms on a fixed thread count (1 and 2 threads gave the
same weights in a 12-step check), so the same machine gives the same weights.
The default 6000 steps take ~100 min on one core of a 2-core machine
(~0.8 s/step with run_all.sh's malloc settings; see the model card).

Writes build/ckpt.pt (float32 state_dict + config) and build/train_log.jsonl.
"""

import argparse
import json
import math
import os
import time

import numpy as np
import torch

from model import GPT2, GPTConfig
from llama_model import Llama, LlamaConfig
from evaluate import val_windows, model_nll

torch.use_deterministic_algorithms(True)


def get_args():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(here, "build"))
    p.add_argument("--out", default=None,
                   help="where the checkpoints and logs go (default: --build)")
    p.add_argument("--steps", type=int, default=6000)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--micro-batch", type=int, default=4)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--min-lr", type=float, default=2e-4)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--eval-every", type=int, default=500)
    p.add_argument("--eval-windows", type=int, default=0,
                   help="validation windows per periodic eval (0 = all)")
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--arch", choices=("gpt2", "llama"), default="gpt2",
                   help="gpt2 = brown-gpt2 (model.py); llama = brown-llama (llama_model.py)")
    p.add_argument("--kv-heads", type=int, default=2, help="llama: K/V heads (grouped-query)")
    p.add_argument("--ckpt-every", type=int, default=0,
                   help="also save the weights every N steps (ckpt-step<N>.pt), so a run cut "
                        "short can still be exported")
    p.add_argument("--n-embd", type=int, default=GPTConfig.n_embd)
    p.add_argument("--n-layer", type=int, default=GPTConfig.n_layer)
    p.add_argument("--n-head", type=int, default=GPTConfig.n_head)
    p.add_argument("--repeat-frac", type=float, default=0.25,
                   help="share of training windows that say their opening twice")
    p.add_argument("--repeat-min", type=int, default=8)
    p.add_argument("--repeat-max", type=int, default=64)
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads (the same count gives the same weights)")
    p.add_argument("--wpe-decay", type=float, default=None,
                   help="weight decay of the position table (default: --weight-decay); minGPT uses 0")
    p.add_argument("--init-from", default=None,
                   help="start from the weights of an earlier ckpt.pt (a second phase)")
    return p.parse_args()


def lr_at(step, a):
    """Linear warmup, then cosine decay from lr to min_lr at the last step."""
    if step < a.warmup:
        return a.lr * (step + 1) / a.warmup
    frac = (step - a.warmup) / max(1, a.steps - a.warmup)
    return a.min_lr + 0.5 * (a.lr - a.min_lr) * (1 + math.cos(math.pi * frac))


def window(train, s, T, rng, a):
    """One training window of T + 1 tokens starting at a sentence's EOT.

    Repeats (to grow induction/copy heads): with probability repeat_frac the
    window says its first L tokens twice, L uniform in [repeat_min,
    repeat_max]:  x[0:L] followed by x[0:T+1-L].  The second copy starts with
    the same EOT and runs on into the text that really follows, so a head
    that looks back for "the token after the earlier occurrence of the
    current token" is rewarded, and because L varies no fixed position
    offset can do the same job.  All draws come from the seeded generator,
    so which windows repeat, and by how much, is the same on every run."""
    if rng.random() < a.repeat_frac:
        L = int(rng.integers(a.repeat_min, a.repeat_max + 1))
        return np.concatenate([train[s:s + L], train[s:s + T + 1 - L]])
    return train[s:s + T + 1]


@torch.no_grad()
def head_probe(model, val, eot, n=32, seg=32):
    """Best previous-token and induction scores over all heads, on n
    held-out segments said twice: EOT s s.  Cheap enough for every eval, so
    the log shows when readable heads appear (analyze_heads.py does the
    full measurement on the exported model)."""
    ids = []
    for k in range(n):
        s = val[1 + k * 257: 1 + k * 257 + seg].astype(np.int64)
        ids.append(np.concatenate([[eot], s, s]))
    _, _, attns = model(torch.from_numpy(np.stack(ids)), want_attn=True)
    A = torch.stack(attns)                              # [L, B, H, T, T]
    t = torch.arange(2, 2 * seg + 1)
    prev = A[:, :, :, t, t - 1].mean(dim=(1, 3))         # [L, H]
    i = torch.arange(0, seg - 1)                        # s_i: first copy at 1 + i
    ind = A[:, :, :, seg + 1 + i, i + 2].mean(dim=(1, 3))
    return prev.max().item(), ind.max().item()


def main():
    a = get_args()
    out = a.out or a.build
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)

    if a.arch == "gpt2":
        cfg = GPTConfig(n_embd=a.n_embd, n_layer=a.n_layer, n_head=a.n_head)
    else:
        cfg = LlamaConfig(hidden_size=a.n_embd, num_hidden_layers=a.n_layer,
                          num_attention_heads=a.n_head, num_key_value_heads=a.kv_heads)
    with open(os.path.join(a.build, "tokenizer", "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    cfg.vocab_size = len(vocab)
    eot = vocab["<|endoftext|>"]
    T = cfg.n_positions if a.arch == "gpt2" else cfg.max_position_embeddings

    train = np.fromfile(os.path.join(a.build, "train.bin"), dtype=np.uint16).astype(np.int64)
    val = np.fromfile(os.path.join(a.build, "val.bin"), dtype=np.uint16)
    # Training windows start at a sentence's <|endoftext|>, so position 0 is
    # always EOT, exactly like a sentence fed to the demo.
    starts = np.flatnonzero(train == eot)
    starts = starts[starts + T + 1 <= len(train)]
    windows = val_windows(val, eot, T)
    if a.eval_windows:
        windows = windows[:a.eval_windows]

    model = GPT2(cfg) if a.arch == "gpt2" else Llama(cfg)
    if a.init_from:
        model.load_state_dict(torch.load(a.init_from, map_location="cpu")["model"])
    # Weight decay only on matrices (incl. embeddings), not on biases / LayerNorm. The position
    # table may get its own: decay pulls it towards zero, and with it the positional signal a
    # previous-token head reads.
    # (The Llama has no position table: rotary positions have no weights.)
    wpe_decay = a.weight_decay if a.wpe_decay is None else a.wpe_decay
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and n != "wpe.weight"]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": a.weight_decay}]
    if a.arch == "gpt2":
        groups.append({"params": [model.wpe.weight], "weight_decay": wpe_decay})
    groups.append({"params": no_decay, "weight_decay": 0.0})
    opt = torch.optim.AdamW(groups, lr=a.lr, betas=(0.9, 0.95), eps=1e-8)
    print(f"params {model.num_params()}  train tokens {len(train)}  "
          f"tokens/step {a.batch * T}  steps {a.steps}")

    log = open(os.path.join(out, "train_log.jsonl"), "w", encoding="utf-8")

    def evaluate(step):
        model.eval()
        tot, cnt = model_nll(model, val, windows)
        prev, ind = head_probe(model, val, eot)
        model.train()
        rec = {"step": step, "val_loss": tot / cnt, "best_prev": round(prev, 3),
               "best_induction": round(ind, 3)}
        log.write(json.dumps(rec) + "\n")
        log.flush()
        print(f"step {step:5d}  val loss {tot / cnt:.4f}  best previous-token head {prev:.2f}  "
              f"best induction head {ind:.2f}", flush=True)
        return tot / cnt

    train_seconds = 0.0
    t_start = time.time()
    model.train()
    for step in range(a.steps):
        if step % a.eval_every == 0:
            evaluate(step)
        t0 = time.time()
        idx = rng.choice(starts, size=a.batch)
        batch = np.stack([window(train, s, T, rng, a) for s in idx])
        x = torch.from_numpy(batch[:, :-1])
        y = torch.from_numpy(batch[:, 1:])
        lr = lr_at(step, a)
        for g in opt.param_groups:
            g["lr"] = lr
        # The batch goes through in micro-batches (gradients summed, same
        # mean loss as one pass): the [B*T, vocab] logits of a whole batch
        # are ~235 MB, which the allocator maps and zeroes afresh every
        # step; small pieces are reused and stay in cache.
        opt.zero_grad(set_to_none=True)
        n_micro = a.batch // a.micro_batch
        loss = 0.0
        for m in range(n_micro):
            sl = slice(m * a.micro_batch, (m + 1) * a.micro_batch)
            _, part, _ = model(x[sl], y[sl])
            (part / n_micro).backward()
            loss += part.item() / n_micro
        loss = torch.tensor(loss)
        torch.nn.utils.clip_grad_norm_(model.parameters(), a.grad_clip)
        opt.step()
        train_seconds += time.time() - t0
        if a.ckpt_every and (step + 1) % a.ckpt_every == 0 and step + 1 < a.steps:
            torch.save({"arch": a.arch, "config": cfg.to_json(), "model": model.state_dict(),
                        "summary": {"steps": step + 1, "partial_of": a.steps,
                                    "train_seconds": round(train_seconds, 1), "args": vars(a)}},
                       os.path.join(out, f"ckpt-step{step + 1}.pt"))
        if step % 20 == 0 or step == a.steps - 1:
            rec = {"step": step, "loss": loss.item(), "lr": lr,
                   "train_seconds": round(train_seconds, 1)}
            log.write(json.dumps(rec) + "\n")
            log.flush()
            if step % 100 == 0:
                print(f"step {step:5d}  loss {loss.item():.4f}  lr {lr:.2e}  "
                      f"{train_seconds / (step + 1):.3f} s/step", flush=True)
    final_val = evaluate(a.steps)
    wall = time.time() - t_start

    summary = {"steps": a.steps, "batch": a.batch, "context": T,
               "tokens_seen": a.steps * a.batch * T, "train_tokens": int(len(train)),
               "epochs": a.steps * a.batch * T / len(train),
               "train_seconds": round(train_seconds, 1), "wall_seconds": round(wall, 1),
               "final_val_loss_fp32": final_val, "threads": torch.get_num_threads(),
               "args": vars(a), "torch": torch.__version__}
    log.write(json.dumps({"summary": summary}) + "\n")
    log.close()
    torch.save({"arch": a.arch, "config": cfg.to_json(), "model": model.state_dict(),
                "summary": summary},
               os.path.join(out, "ckpt.pt"))
    with open(os.path.join(out, "train_summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
    print(f"done: {train_seconds:.0f} s training, {wall:.0f} s wall, final val {final_val:.4f}")


if __name__ == "__main__":
    main()
