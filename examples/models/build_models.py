"""Build the weight-free ONNX graphs Strider ships, from the architectures' published
definitions (structure and shapes only).

    python examples/models/build_models.py   # writes src/strider/model/zoo/*.onnx

Weights are graph inputs of their declared shape (no values), listed in the model's
``strider.weights`` metadata so that Strider treats them -- and everything computed
from them alone -- as constants; the files stay a few KiB.

- ``resnet50.onnx``: ResNet-50 v1.5 (He et al. 2016, "Deep Residual Learning"; torchvision
  layout): 7x7/2 stem, 3-4-6-3 bottleneck blocks (1x1, 3x3 with stride on the 3x3, 1x1,
  4x expansion), batch norm, ReLU, residual adds, global average pool, 1000-way FC.
  Batch 1, 224x224, NCHW as exported; ``--layout-policy nhwc`` adds a channels-last
  backend's conversions.
- ``bert_attention.onnx``: one BERT-base self-attention layer (Devlin et al. 2019): hidden
  768, 12 heads of 64, sequence 384: Q/K/V projections, the head split
  ``(B,S,H,D) -> (B,H,S,D)``, K transposed for ``Q K^T``, softmax, the head merge back,
  and the output projection, whose weight is stored transposed (a constant transpose).
- ``llama_block.onnx``: the attention of a Llama-style decoder block (Touvron et al. 2023;
  Llama 3 8B shapes): hidden 4096, 32 query heads and 8 key/value heads of 128
  (grouped-query attention), sequence 512, rotary position embedding (rotate-half) on Q
  and K, in float16.
- ``swin_window.onnx``: Swin-T stage 1 window partition and reverse (Liu et al. 2021):
  56x56x96 tokens in 7x7 windows, ``(B, H/7, 7, W/7, 7, C) -> (B, H/7, W/7, 7, 7, C)``.
- ``espcn.onnx``: ESPCN x3 super-resolution (Shi et al. 2016): conv 5x5/64, 3x3/32,
  3x3/9, then the sub-pixel shuffle (DepthToSpace, blocksize 3), on a 1x1x224x224 image.
"""

from __future__ import annotations

from pathlib import Path

import onnx
from onnx import TensorProto, helper

HERE = Path(__file__).resolve().parents[2] / "src" / "strider" / "model" / "zoo"


class Builder:
    def __init__(self, name: str, dtype=TensorProto.FLOAT):
        self.name, self.dtype = name, dtype
        self.nodes, self.inputs, self.weights, self.consts = [], [], [], []
        self.count = 0

    def fresh(self, base: str) -> str:
        self.count += 1
        return f"{base}_{self.count}"

    def input(self, name, shape):
        self.inputs.append(helper.make_tensor_value_info(name, self.dtype, list(shape)))
        return name

    def weight(self, base, shape):
        name = self.fresh(base)
        self.inputs.append(helper.make_tensor_value_info(name, self.dtype, list(shape)))
        self.weights.append(name)
        return name

    def shape_const(self, values):
        name = self.fresh("shape")
        self.consts.append(helper.make_tensor(name, TensorProto.INT64, [len(values)], values))
        return name

    def op(self, op_type, inputs, base=None, **attrs):
        out = self.fresh(base or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def save(self, outputs, file):
        outs = [helper.make_empty_tensor_value_info(o) for o in outputs]
        graph = helper.make_graph(self.nodes, self.name, self.inputs, outs,
                                  initializer=self.consts)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                  producer_name="strider examples/models/build_models.py")
        helper.set_model_props(model, {"strider.weights": ",".join(self.weights)})
        model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        onnx.checker.check_model(model)
        onnx.save(model, HERE / file)


def conv_bn(b, x, cin, cout, k, stride=1, relu=True):
    w = b.weight("w", (cout, cin, k, k))
    y = b.op("Conv", [x, w], kernel_shape=[k, k], strides=[stride, stride],
             pads=[k // 2] * 4)
    scale, bias, mean, var = (b.weight(n, (cout,)) for n in ("gamma", "beta", "mean", "var"))
    y = b.op("BatchNormalization", [y, scale, bias, mean, var])
    return b.op("Relu", [y]) if relu else y


def resnet50():
    b = Builder("resnet50")
    x = b.input("image", (1, 3, 224, 224))
    y = conv_bn(b, x, 3, 64, 7, 2)
    y = b.op("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, (blocks, width) in enumerate(((3, 64), (4, 128), (6, 256), (3, 512))):
        for k in range(blocks):
            stride = 2 if k == 0 and stage > 0 else 1
            h = conv_bn(b, y, cin, width, 1)
            h = conv_bn(b, h, width, width, 3, stride)
            h = conv_bn(b, h, width, 4 * width, 1, relu=False)
            short = conv_bn(b, y, cin, 4 * width, 1, stride, relu=False) if k == 0 else y
            y = b.op("Relu", [b.op("Add", [h, short])])
            cin = 4 * width
    y = b.op("GlobalAveragePool", [y])
    y = b.op("Flatten", [y])
    logits = b.op("Gemm", [y, b.weight("fc", (1000, 2048)), b.weight("fc_b", (1000,))], transB=1)
    b.save([logits], "resnet50.onnx")


def heads(b, x, batch, seq, n, d, perm=(0, 2, 1, 3)):
    y = b.op("Reshape", [x, b.shape_const([batch, seq, n, d])])
    return b.op("Transpose", [y], perm=list(perm))


def bert_attention():
    b = Builder("bert_attention")
    B, S, H, D = 1, 384, 12, 64
    x = b.input("hidden", (B, S, H * D))
    q = heads(b, b.op("MatMul", [x, b.weight("wq", (768, 768))]), B, S, H, D)
    k = heads(b, b.op("MatMul", [x, b.weight("wk", (768, 768))]), B, S, H, D, (0, 2, 3, 1))
    v = heads(b, b.op("MatMul", [x, b.weight("wv", (768, 768))]), B, S, H, D)
    p = b.op("Softmax", [b.op("MatMul", [q, k])], axis=-1)
    ctx = b.op("Transpose", [b.op("MatMul", [p, v])], perm=[0, 2, 1, 3])
    ctx = b.op("Reshape", [ctx, b.shape_const([B, S, H * D])])
    wo = b.op("Transpose", [b.weight("wo_t", (768, 768))], perm=[1, 0])  # stored transposed
    b.save([b.op("MatMul", [ctx, wo])], "bert_attention.onnx")


def rope(b, x, cos, sin, half):
    lo = b.op("Slice", [x, b.shape_const([0]), b.shape_const([half]), b.shape_const([-1])])
    hi = b.op("Slice", [x, b.shape_const([half]), b.shape_const([2 * half]),
                        b.shape_const([-1])])
    rotated = b.op("Concat", [b.op("Neg", [hi]), lo], axis=-1)
    return b.op("Add", [b.op("Mul", [x, cos]), b.op("Mul", [rotated, sin])])


def llama_block():
    b = Builder("llama_block", TensorProto.FLOAT16)
    B, S, Hq, Hkv, D = 1, 512, 32, 8, 128
    x = b.input("hidden", (B, S, Hq * D))
    cos, sin = b.input("rope_cos", (1, 1, S, D)), b.input("rope_sin", (1, 1, S, D))
    q = heads(b, b.op("MatMul", [x, b.weight("wq", (4096, Hq * D))]), B, S, Hq, D)
    k = heads(b, b.op("MatMul", [x, b.weight("wk", (4096, Hkv * D))]), B, S, Hkv, D)
    v = heads(b, b.op("MatMul", [x, b.weight("wv", (4096, Hkv * D))]), B, S, Hkv, D)
    q, k = rope(b, q, cos, sin, D // 2), rope(b, k, cos, sin, D // 2)
    group = Hq // Hkv  # each K/V head serves 4 query heads
    k = b.op("Reshape", [b.op("Expand", [b.op("Unsqueeze", [k, b.shape_const([2])]),
                                         b.shape_const([B, Hkv, group, S, D])]),
                         b.shape_const([B, Hq, S, D])])
    v = b.op("Reshape", [b.op("Expand", [b.op("Unsqueeze", [v, b.shape_const([2])]),
                                         b.shape_const([B, Hkv, group, S, D])]),
                         b.shape_const([B, Hq, S, D])])
    kt = b.op("Transpose", [k], perm=[0, 1, 3, 2])
    p = b.op("Softmax", [b.op("MatMul", [q, kt])], axis=-1)
    ctx = b.op("Transpose", [b.op("MatMul", [p, v])], perm=[0, 2, 1, 3])
    ctx = b.op("Reshape", [ctx, b.shape_const([B, S, Hq * D])])
    b.save([b.op("MatMul", [ctx, b.weight("wo", (Hq * D, 4096))])], "llama_block.onnx")


def swin_window():
    b = Builder("swin_window")
    B, H, W, C, M = 1, 56, 56, 96, 7
    x = b.input("tokens", (B, H, W, C))
    y = b.op("Reshape", [x, b.shape_const([B, H // M, M, W // M, M, C])])
    y = b.op("Transpose", [y], perm=[0, 1, 3, 2, 4, 5])
    windows = b.op("Reshape", [y, b.shape_const([B * (H // M) * (W // M), M * M, C])])
    attended = b.op("MatMul", [windows, b.weight("w", (C, C))])  # stands for window attention
    y = b.op("Reshape", [attended, b.shape_const([B, H // M, W // M, M, M, C])])
    y = b.op("Transpose", [y], perm=[0, 1, 3, 2, 4, 5])
    b.save([b.op("Reshape", [y, b.shape_const([B, H, W, C])])], "swin_window.onnx")


def espcn():
    b = Builder("espcn")
    x = b.input("image_y", (1, 1, 224, 224))
    y = x
    for cin, cout, k in ((1, 64, 5), (64, 32, 3), (32, 9, 3)):
        y = b.op("Conv", [y, b.weight("w", (cout, cin, k, k)), b.weight("b", (cout,))],
                 kernel_shape=[k, k], pads=[k // 2] * 4)
        if cout != 9:
            y = b.op("Tanh", [y])
    b.save([b.op("DepthToSpace", [y], blocksize=3, mode="CRD")], "espcn.onnx")


if __name__ == "__main__":
    for build in (resnet50, bert_attention, llama_block, swin_window, espcn):
        build()
        print(f"wrote {build.__name__}.onnx")
