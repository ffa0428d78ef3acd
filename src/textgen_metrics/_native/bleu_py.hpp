// Python face of the BLEU / GLEU kernels and of the 13a and whitespace tokenizers.
#pragma once

#include "bleu.hpp"
#include "pyutil.hpp"

namespace tgm {

// What a batch's texts are and how they are tokenised: Python reads the codes as
// _core.BleuInput.
enum class BleuInput : int {
    TEXT_13A = 0,    // texts, sacrebleu's 13a tokens
    TEXT_SPLIT = 1,  // texts, str.split() (sacrebleu's "none")
    TOKENS = 2,      // token lists, tokenised in Python
};

// A BleuInput argument checked (BleuInput(7) can be made from Python); `texts`: a call that
// tokenises texts, for which TOKENS is no tokenizer.
inline void check_bleu_input(BleuInput tok, bool texts) {
    if (tok != BleuInput::TEXT_13A && tok != BleuInput::TEXT_SPLIT && tok != BleuInput::TOKENS)
        throw py::value_error("tokenizer: unknown BleuInput " + std::to_string(static_cast<int>(tok)) +
                              "; it has TEXT_13A, TEXT_SPLIT and TOKENS");
    if (texts && tok == BleuInput::TOKENS)
        throw py::value_error("tokenizer: TOKENS tokenises no text; give TEXT_13A or TEXT_SPLIT");
}

struct BleuState {
    Interner vocab;
    NgramWork w;
    std::string buf;
    std::vector<std::string_view> parts;
    std::vector<u32> hyp;
    std::vector<std::vector<u32>> refs;
};

class BleuCore {
  public:
    // predictions: texts (or token lists with TOKENS); references: per example a list of them.
    // Returns (hyp_len, ref_len, correct, total): correct/total are per example lists of
    // max_order counts.
    py::tuple bleu_stats(py::handle preds, py::handle refs, BleuInput tok, bool lowercase, int max_order,
                         int num_threads) {
        check_bleu_input(tok, false);
        Input in;
        read(in, preds, refs, tok);
        size_t n = in.pred.size();
        size_t K = static_cast<size_t>(std::max(max_order, 0));
        std::vector<u64> hyp_len(n), ref_len(n), correct(n * K), total(n * K);
        run(in, tok, lowercase, num_threads, [&](BleuState& st, size_t i) {
            tgm::bleu_stats(st.hyp, st.refs, max_order, st.w, &correct[i * K], &total[i * K], ref_len[i]);
            hyp_len[i] = st.hyp.size();
        });
        py::list c(n), t(n);
        for (size_t i = 0; i < n; ++i) {
            c[i] = ints(&correct[i * K], K);
            t[i] = ints(&total[i * K], K);
        }
        return py::make_tuple(ints(hyp_len.data(), n), ints(ref_len.data(), n), c, t);
    }

    // Returns (matches, total) per example; total 0 where nltk's corpus_gleu skips the example.
    py::tuple gleu_stats(py::handle preds, py::handle refs, BleuInput tok, bool lowercase, int min_len, int max_len,
                         int num_threads) {
        check_bleu_input(tok, false);
        Input in;
        read(in, preds, refs, tok);
        size_t n = in.pred.size();
        std::vector<u64> tp(n), all(n);
        run(in, tok, lowercase, num_threads,
            [&](BleuState& st, size_t i) { tgm::gleu_stats(st.hyp, st.refs, min_len, max_len, st.w, tp[i], all[i]); });
        return py::make_tuple(ints(tp.data(), n), ints(all.data(), n));
    }

    // Tokens of each text: 13a (TEXT_13A) or str.split() (TEXT_SPLIT).
    py::list tokenize(py::handle texts, BleuInput tok, bool lowercase) {
        check_bleu_input(tok, true);
        Keep keep;
        std::vector<StrRef> t = str_list(texts, keep, "texts");
        std::vector<std::vector<std::string>> out(t.size());
        {
            py::gil_scoped_release release;
            std::string buf;
            std::vector<std::string_view> parts;
            for (size_t i = 0; i < t.size(); ++i) {
                split_text(t[i].sv(), tok, lowercase, buf, parts);
                for (auto& p : parts) out[i].emplace_back(p);
            }
        }
        py::list res(t.size());
        for (size_t i = 0; i < t.size(); ++i) res[i] = to_pylist(out[i]);
        return res;
    }

  private:
    struct Input {
        Keep keep;
        std::vector<std::vector<StrRef>> pred;                // texts: one StrRef; tokens: the tokens
        std::vector<std::vector<std::vector<StrRef>>> refs;
    };

    static py::list ints(const u64* v, size_t n) {
        py::list out(n);
        for (size_t i = 0; i < n; ++i) PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i), PyLong_FromUnsignedLongLong(v[i]));
        return out;
    }

    static std::vector<StrRef> one(PyObject* o, Keep& keep, BleuInput tok, const char* what, size_t i) {
        if (tok == BleuInput::TOKENS) return str_list(o, keep, what);
        return {utf8_of(o, keep, what, i)};
    }

    void read(Input& in, py::handle preds, py::handle refs, BleuInput tok) {
        py::object pf = fast_seq(preds, "predictions"), rf = fast_seq(refs, "references");
        size_t n = static_cast<size_t>(PySequence_Fast_GET_SIZE(pf.ptr()));
        if (static_cast<size_t>(PySequence_Fast_GET_SIZE(rf.ptr())) != n)
            throw py::value_error("predictions and references differ in length");
        in.pred.resize(n);
        in.refs.resize(n);
        for (size_t i = 0; i < n; ++i) {
            in.pred[i] = one(PySequence_Fast_GET_ITEM(pf.ptr(), static_cast<Py_ssize_t>(i)), in.keep, tok, "predictions", i);
            py::object rl = fast_seq(PySequence_Fast_GET_ITEM(rf.ptr(), static_cast<Py_ssize_t>(i)), "references");
            for (Py_ssize_t j = 0; j < PySequence_Fast_GET_SIZE(rl.ptr()); ++j)
                in.refs[i].push_back(one(PySequence_Fast_GET_ITEM(rl.ptr(), j), in.keep, tok, "references", i));
            in.keep.objs.push_back(rl);
        }
    }

    static void split_text(std::string_view s, BleuInput tok, bool lowercase, std::string& buf,
                           std::vector<std::string_view>& parts) {
        parts.clear();
        if (tok == BleuInput::TEXT_13A) {
            tokenize_13a(s, lowercase, buf, parts);
        } else if (lowercase) {
            py_lower(s, buf);
            split_ws(buf, parts);
        } else {
            split_ws(s, parts);
        }
    }

    static void ids_of(BleuState& st, const std::vector<StrRef>& src, BleuInput tok, bool lowercase, std::vector<u32>& out) {
        out.clear();
        if (tok == BleuInput::TOKENS) {
            for (auto& t : src) out.push_back(st.vocab.intern(t.sv()));
            return;
        }
        split_text(src[0].sv(), tok, lowercase, st.buf, st.parts);
        for (auto& p : st.parts) out.push_back(st.vocab.intern(p));
    }

    template <class F>
    void run(Input& in, BleuInput tok, bool lowercase, int num_threads, F&& fn) {
        py::gil_scoped_release release;
        std::lock_guard<std::mutex> lock(mutex_);
        int nt = resolve_threads(num_threads);
        while (states_.size() < static_cast<size_t>(nt)) states_.emplace_back(new BleuState());
        parallel_chunks(in.pred.size(), nt, [&](size_t k, size_t lo, size_t hi) {
            BleuState& st = *states_[k];
            for (size_t i = lo; i < hi; ++i) {
                if (st.vocab.size() > (1u << 22)) st.vocab.clear();
                ids_of(st, in.pred[i], tok, lowercase, st.hyp);
                st.refs.resize(in.refs[i].size());
                for (size_t r = 0; r < in.refs[i].size(); ++r) ids_of(st, in.refs[i][r], tok, lowercase, st.refs[r]);
                fn(st, i);
            }
        });
    }

    std::vector<std::unique_ptr<BleuState>> states_;
    std::mutex mutex_;
};

}  // namespace tgm
