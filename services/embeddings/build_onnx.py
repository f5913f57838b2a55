#!/usr/bin/env python3
"""Builds an ONNX graph of sentence-transformers/all-MiniLM-L6-v2 from its model.safetensors.

The usual way to get an ONNX file of a Hugging Face model is to export it with torch, a download of
about 3 GB. This script needs only `onnx` and `safetensors`: the graph is written out by hand as the
standard BertModel (absolute positions, post-layer-norm, exact erf GELU), with the model's weights as
its initializers, and ONNX Runtime runs it. The sentence-transformers head (mean pooling over the
attention mask, then L2 normalisation) is part of the graph, so the server does no arithmetic.

Inputs : input_ids, attention_mask, token_type_ids  int64 [batch, seq]
Outputs: last_hidden_state   float32 [batch, seq, hidden]  (the usual output name of an exported BertModel)
         sentence_embedding  float32 [batch, hidden]       (mean pooling over the mask, then L2 norm)

usage: build_onnx.py MODEL_DIR OUT.onnx   (MODEL_DIR holds config.json and model.safetensors)
"""
import json
import sys

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save_model
from safetensors.numpy import load_file


def main(model_dir: str, out_path: str) -> None:
    cfg = json.load(open(f"{model_dir}/config.json"))
    # The graph below is only right for this architecture; anything else must fail loudly.
    if cfg["model_type"] != "bert" or cfg["hidden_act"] != "gelu" or cfg.get("position_embedding_type", "absolute") != "absolute":
        raise SystemExit(f"build_onnx.py: not a BertModel with absolute positions and GELU: {model_dir}/config.json")
    H = cfg["hidden_size"]
    NH = cfg["num_attention_heads"]
    HD = H // NH
    L = cfg["num_hidden_layers"]
    eps = float(cfg["layer_norm_eps"])
    w = load_file(f"{model_dir}/model.safetensors")
    # Some checkpoints name their tensors with a "bert." prefix.
    if not any(k.startswith("embeddings.") for k in w):
        w = {k[len("bert."):]: v for k, v in w.items() if k.startswith("bert.")}

    inits, nodes = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    n = [0]

    def node(op, inputs, **attrs):
        n[0] += 1
        out = f"{op.lower()}_{n[0]}"
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def linear(x, prefix):
        # A torch Linear weight is [out, in]; MatMul wants [in, out].
        wt = const(prefix + ".weight_T", w[prefix + ".weight"].T.astype(np.float32))
        b = const(prefix + ".bias", w[prefix + ".bias"].astype(np.float32))
        return node("Add", [node("MatMul", [x, wt]), b])

    def layernorm(x, prefix):
        g = const(prefix + ".weight", w[prefix + ".weight"])
        b = const(prefix + ".bias", w[prefix + ".bias"])
        return node("LayerNormalization", [x, g, b], axis=-1, epsilon=eps)

    # ---- constants
    c_one_f = const("c_one_f", np.array(1.0, np.float32))
    c_half = const("c_half", np.array(0.5, np.float32))
    c_isqrt2 = const("c_isqrt2", np.array(1.0 / np.sqrt(2.0), np.float32))
    c_scale = const("c_scale", np.array(1.0 / np.sqrt(HD), np.float32))
    c_neg = const("c_neg", np.array(np.finfo(np.float32).min, np.float32))
    c_0 = const("c_0", np.array([0], np.int64))
    c_1 = const("c_1", np.array([1], np.int64))
    c_ax1 = const("c_ax1", np.array([1], np.int64))
    c_ax12 = const("c_ax12", np.array([1, 2], np.int64))
    c_split = const("c_split_shape", np.array([0, 0, NH, HD], np.int64))
    c_merge = const("c_merge_shape", np.array([0, 0, H], np.int64))
    c_eps_pool = const("c_eps_pool", np.array(1e-9, np.float32))
    c_eps_norm = const("c_eps_norm", np.array(1e-12, np.float32))

    # ---- embeddings
    word = const("word_embeddings", w["embeddings.word_embeddings.weight"])
    pos = const("position_embeddings", w["embeddings.position_embeddings.weight"])
    tok = const("token_type_embeddings", w["embeddings.token_type_embeddings.weight"])
    seq_len = node("Slice", [node("Shape", ["input_ids"]), c_1, const("c_2", np.array([2], np.int64))])
    pos_e = node("Slice", [pos, c_0, seq_len])  # [S, H], broadcast over batch
    x = node("Add", [node("Gather", [word, "input_ids"], axis=0), node("Gather", [tok, "token_type_ids"], axis=0)])
    x = node("Add", [x, pos_e])
    x = layernorm(x, "embeddings.LayerNorm")

    # ---- additive attention mask [B,1,1,S]: 0 where attended, float32.min where padded, so that
    # padding gets no weight in the softmax and a batch padded to its longest input gives each
    # input the vector it would get alone.
    mask_f = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    ext = node("Mul", [node("Sub", [c_one_f, mask_f]), c_neg])
    ext = node("Unsqueeze", [ext, c_ax12])

    for i in range(L):
        p = f"encoder.layer.{i}"
        q = node("Transpose", [node("Reshape", [linear(x, p + ".attention.self.query"), c_split])], perm=[0, 2, 1, 3])
        k = node("Transpose", [node("Reshape", [linear(x, p + ".attention.self.key"), c_split])], perm=[0, 2, 3, 1])
        v = node("Transpose", [node("Reshape", [linear(x, p + ".attention.self.value"), c_split])], perm=[0, 2, 1, 3])
        scores = node("Add", [node("Mul", [node("MatMul", [q, k]), c_scale]), ext])
        probs = node("Softmax", [scores], axis=-1)
        ctx = node("Reshape", [node("Transpose", [node("MatMul", [probs, v])], perm=[0, 2, 1, 3]), c_merge])
        attn = linear(ctx, p + ".attention.output.dense")
        x = layernorm(node("Add", [attn, x]), p + ".attention.output.LayerNorm")
        h = linear(x, p + ".intermediate.dense")
        # exact GELU: 0.5 * h * (1 + erf(h / sqrt(2)))
        h = node("Mul", [node("Mul", [h, c_half]), node("Add", [node("Erf", [node("Mul", [h, c_isqrt2])]), c_one_f])])
        h = linear(h, p + ".output.dense")
        x = layernorm(node("Add", [h, x]), p + ".output.LayerNorm")

    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))

    # ---- sentence-transformers Pooling(mean) + Normalize
    m3 = node("Unsqueeze", [mask_f, const("c_ax2", np.array([2], np.int64))])  # [B,S,1]
    summed = node("ReduceSum", [node("Mul", ["last_hidden_state", m3]), c_ax1], keepdims=0)  # [B,H]
    count = node("Max", [node("ReduceSum", [m3, c_ax1], keepdims=0), c_eps_pool])  # [B,1]
    mean = node("Div", [summed, count])
    norm = node("Max", [node("ReduceL2", [mean], axes=[1], keepdims=1), c_eps_norm])
    nodes.append(helper.make_node("Div", [mean, norm], ["sentence_embedding"]))

    i64 = lambda nm: helper.make_tensor_value_info(nm, TensorProto.INT64, ["batch_size", "sequence_length"])
    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [i64("input_ids"), i64("attention_mask"), i64("token_type_ids")],
        [
            helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch_size", "sequence_length", H]),
            helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch_size", H]),
        ],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="build_onnx.py")
    # IR version 8 is what onnx writes for opset 17; saying so keeps the file readable by older
    # ONNX Runtime builds (1.14 and later) should another runtime be used.
    model.ir_version = 8
    checker.check_model(model)
    save_model(model, out_path)
    print(f"wrote {out_path}: {len(nodes)} nodes, {len(inits)} initializers")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
