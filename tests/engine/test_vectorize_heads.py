"""The vectorised deriv lists only the leading states its straight-line lines read."""
from blocksim.engine import vectorize


def test_a_list_is_cut_after_the_last_constant_index_read():
    body = ["x_ = x.tolist()", "m_ = m.tolist()", "s0 = (_p0 if m_[0] else _p1)",
            "dx_[0] = s0 - x_[3] * x_[1]", "dx_[1:100] = x[0:99] - x[1:100]"]
    assert vectorize._trim_heads(body)[:2] == ["x_ = x[:4].tolist()", "m_ = m[:1].tolist()"]


def test_a_list_no_line_reads_is_not_made():
    body = ["x_ = x.tolist()", "z_ = z.tolist()", "dx_[1:9] = x[0:8] - x[1:9]"]
    assert vectorize._trim_heads(body) == ["dx_[1:9] = x[0:8] - x[1:9]"]


def test_a_list_used_otherwise_is_made_whole():
    for use in ("dx_[0] = x_[i]", "x_[2] = 1.0", "x_[2] += 1.0", "n = len(x_)"):
        assert vectorize._trim_heads(["x_ = x.tolist()", use])[0] == "x_ = x.tolist()", use
    # a comparison is a read
    assert vectorize._trim_heads(["x_ = x.tolist()", "if x_[2] == 1.0: dx_[0] = 1.0"]
                                 )[0] == "x_ = x[:3].tolist()"
