// METEOR as nltk 3.10's meteor_score, step for step: exact matches of lower-cased words, then of
// their Porter stems, then WordNet synonyms of the stemmed leftovers; each stage matches from the
// last hypothesis word backwards to the last free reference position. Per-word work (lower,
// stem, synonyms) is memoised per thread; ids are per-thread.
#pragma once

#include <cmath>
#include <memory>

#include "porter.hpp"
#include "treebank.hpp"
#include "pyutil.hpp"
#include "wordnet.hpp"

namespace tgm {

struct MeteorState {
    Interner vocab;
    std::vector<u32> low_of, stem_of;
    std::vector<int> syn_at;  // stem id -> index into syn_lists, -1: not computed
    std::vector<std::vector<u32>> syn_lists;
    // scratch
    std::vector<u32> hw, rw, hi, ri, nhi, nri, nhw, nrw, next;
    std::vector<std::pair<u32, u32>> matches;
    std::vector<u8> used;
    Stamped head;
    TreebankTokenizer tb;
    std::vector<std::string> words;
    std::string sbuf;
    std::vector<std::string_view> names;

    static constexpr u32 NONE = 0xFFFFFFFFu;

    void grow(std::vector<u32>& v, u32 id) {
        if (id >= v.size()) v.resize(std::max<size_t>(id + 1, v.size() * 2), NONE);
    }
    u32 low(u32 raw) {
        grow(low_of, raw);
        if (low_of[raw] == NONE) {
            py_lower(vocab.str(raw), sbuf);
            u32 l = vocab.intern(sbuf);
            grow(low_of, raw);
            low_of[raw] = l;
        }
        return low_of[raw];
    }
    u32 stem(u32 w) {
        grow(stem_of, w);
        if (stem_of[w] == NONE) {
            std::string st = porter_stem(vocab.str(w));
            u32 s = vocab.intern(st);
            grow(stem_of, w);
            stem_of[w] = s;
        }
        return stem_of[w];
    }
    const std::vector<u32>& synonyms(u32 w, const WordNetIndex& wn) {
        if (w >= syn_at.size()) syn_at.resize(std::max<size_t>(w + 1, syn_at.size() * 2), -1);
        if (syn_at[w] < 0) {
            std::vector<u32> ids;
            ids.push_back(w);
            py_lower(vocab.str(w), sbuf);
            names.clear();
            std::string key = sbuf;
            wn.synonym_names(key, names);
            for (auto& nm : names) ids.push_back(vocab.intern(nm));
            std::sort(ids.begin(), ids.end());
            ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
            if (w >= syn_at.size()) syn_at.resize(w + 1, -1);
            syn_at[w] = static_cast<int>(syn_lists.size());
            syn_lists.push_back(std::move(ids));
        }
        return syn_lists[static_cast<size_t>(syn_at[w])];
    }

    // nltk _match_enums on parallel (index, word) lists; leftovers replace the inputs.
    void match_stage(std::vector<u32>& hidx, std::vector<u32>& hwords, std::vector<u32>& ridx,
                     std::vector<u32>& rwords) {
        head.ensure(vocab.size());
        head.reset();
        next.assign(rwords.size(), NONE);
        for (size_t j = 0; j < rwords.size(); ++j) {
            u32 w = rwords[j];
            next[j] = head.has(w) ? head.get(w) : NONE;
            head.ref(w) = static_cast<u32>(j);
        }
        used.assign(rwords.size(), 0);
        nhi.clear();
        nhw.clear();
        for (size_t i = hwords.size(); i-- > 0;) {
            u32 w = hwords[i];
            u32 j = head.has(w) ? head.get(w) : NONE;
            if (j != NONE) {
                head.ref(w) = next[j];
                if (next[j] == NONE) head.ref(w) = NONE;
                used[j] = 1;
                matches.push_back({hidx[i], ridx[j]});
            } else {
                nhi.push_back(hidx[i]);
                nhw.push_back(w);
            }
        }
        std::reverse(nhi.begin(), nhi.end());
        std::reverse(nhw.begin(), nhw.end());
        hidx.swap(nhi);
        hwords.swap(nhw);
        nri.clear();
        nrw.clear();
        for (size_t j = 0; j < rwords.size(); ++j)
            if (!used[j]) {
                nri.push_back(ridx[j]);
                nrw.push_back(rwords[j]);
            }
        ridx.swap(nri);
        rwords.swap(nrw);
    }

    // nltk align_words: sorted (hypothesis index, reference index) matches.
    void align(const std::vector<u32>& hyp, const std::vector<u32>& ref, const WordNetIndex& wn) {
        matches.clear();
        hw.clear();
        rw.clear();
        hi.clear();
        ri.clear();
        for (size_t i = 0; i < hyp.size(); ++i) {
            hw.push_back(low(hyp[i]));
            hi.push_back(static_cast<u32>(i));
        }
        for (size_t j = 0; j < ref.size(); ++j) {
            rw.push_back(low(ref[j]));
            ri.push_back(static_cast<u32>(j));
        }
        match_stage(hi, hw, ri, rw);
        if (!hw.empty() && !rw.empty()) {
            for (auto& w : hw) w = stem(w);
            for (auto& w : rw) w = stem(w);
            match_stage(hi, hw, ri, rw);
            if (!hw.empty() && !rw.empty()) {
                // _enum_wordnetsyn_match: the free reference position furthest right whose word
                // is a synonym of the (stemmed) hypothesis word
                used.assign(rw.size(), 0);
                for (size_t i = hw.size(); i-- > 0;) {
                    const std::vector<u32>& syn = synonyms(hw[i], wn);
                    for (size_t j = rw.size(); j-- > 0;) {
                        if (used[j]) continue;
                        if (std::binary_search(syn.begin(), syn.end(), rw[j])) {
                            used[j] = 1;
                            matches.push_back({hi[i], ri[j]});
                            break;
                        }
                    }
                }
            }
        }
        std::sort(matches.begin(), matches.end());
    }

    // nltk single_meteor_score
    double single(const std::vector<u32>& hyp, const std::vector<u32>& ref, const WordNetIndex& wn, double alpha,
                  double beta, double gamma) {
        align(hyp, ref, wn);
        size_t count = matches.size();
        if (!count || hyp.empty() || ref.empty()) return 0.0;
        double precision = static_cast<double>(count) / static_cast<double>(hyp.size());
        double recall = static_cast<double>(count) / static_cast<double>(ref.size());
        double denom = alpha * precision + (1 - alpha) * recall;
        if (denom == 0) return 0.0;
        double fmean = (precision * recall) / denom;
        size_t chunks = 1;
        for (size_t k = 0; k + 1 < count; ++k) {
            auto a = matches[k], b = matches[k + 1];
            if (!(b.first == a.first + 1 && b.second == a.second + 1)) ++chunks;
        }
        double frag = static_cast<double>(chunks) / static_cast<double>(count);
        double penalty = gamma * std::pow(frag, beta);
        return (1 - penalty) * fmean;
    }

    void reset_if_large() {
        if (vocab.size() > (1u << 22)) {
            vocab.clear();
            low_of.clear();
            stem_of.clear();
            syn_at.clear();
            syn_lists.clear();
        }
    }
};

class MeteorCore {
  public:
    explicit MeteorCore(std::shared_ptr<WordNetIndex> wn) : wn_(std::move(wn)) {}

    // hyps: token lists; refs: per example, a list of token lists. Returns the best score over
    // each example's references.
    std::vector<double> score(py::handle hyps, py::handle refs, double alpha, double beta, double gamma,
                              int num_threads, bool texts) {
        Keep keep;
        py::object hf = fast_seq(hyps, "predictions");
        py::object rf = fast_seq(refs, "references");
        size_t n = static_cast<size_t>(PySequence_Fast_GET_SIZE(hf.ptr()));
        if (static_cast<size_t>(PySequence_Fast_GET_SIZE(rf.ptr())) != n)
            throw py::value_error("predictions and references differ in length");
        std::vector<std::vector<StrRef>> H(n);
        std::vector<std::vector<std::vector<StrRef>>> R(n);
        // texts: one string per side, tokenised by the core's Treebank tokenizer (word_tokenize)
        auto read = [&](PyObject* o, const char* what, size_t i) {
            if (texts) return std::vector<StrRef>{utf8_of(o, keep, what, i)};
            return str_list(o, keep, what);
        };
        for (size_t i = 0; i < n; ++i) {
            H[i] = read(PySequence_Fast_GET_ITEM(hf.ptr(), static_cast<Py_ssize_t>(i)), "predictions", i);
            py::object rl = fast_seq(PySequence_Fast_GET_ITEM(rf.ptr(), static_cast<Py_ssize_t>(i)), "references");
            for (Py_ssize_t j = 0; j < PySequence_Fast_GET_SIZE(rl.ptr()); ++j)
                R[i].push_back(read(PySequence_Fast_GET_ITEM(rl.ptr(), j), "references", i));
            keep.objs.push_back(rl);
        }
        std::vector<double> out(n, 0.0);
        {
            py::gil_scoped_release release;
            std::lock_guard<std::mutex> lock(mutex_);
            int nt = resolve_threads(num_threads);
            while (states_.size() < static_cast<size_t>(nt)) states_.emplace_back(new MeteorState());
            parallel_chunks(n, nt, [&](size_t k, size_t lo, size_t hi) {
                MeteorState& st = *states_[k];
                std::vector<u32> h, r;
                for (size_t i = lo; i < hi; ++i) {
                    st.reset_if_large();
                    ids(st, H[i], h, texts);
                    double best = 0.0;
                    bool first = true;
                    for (auto& ref : R[i]) {
                        ids(st, ref, r, texts);
                        double s = st.single(h, r, *wn_, alpha, beta, gamma);
                        if (first || s > best) best = s;
                        first = false;
                    }
                    out[i] = best;
                }
            });
        }
        return out;
    }

    std::vector<std::pair<u32, u32>> align(py::handle hyp, py::handle ref) {
        Keep keep;
        std::vector<StrRef> h = str_list(hyp, keep, "hypothesis"), r = str_list(ref, keep, "reference");
        py::gil_scoped_release release;
        std::lock_guard<std::mutex> lock(mutex_);
        if (states_.empty()) states_.emplace_back(new MeteorState());
        MeteorState& st = *states_[0];
        std::vector<u32> hi, ri;
        ids(st, h, hi);
        ids(st, r, ri);
        st.align(hi, ri, *wn_);
        return st.matches;
    }

    std::vector<std::string> synonyms(const std::string& word) {
        py::gil_scoped_release release;  // never wait for the lock while holding the GIL
        std::lock_guard<std::mutex> lock(mutex_);
        if (states_.empty()) states_.emplace_back(new MeteorState());
        MeteorState& st = *states_[0];
        std::vector<std::string> out;
        for (u32 id : st.synonyms(st.vocab.intern(word), *wn_)) out.emplace_back(st.vocab.str(id));
        std::sort(out.begin(), out.end());
        return out;
    }

  private:
    static void ids(MeteorState& st, const std::vector<StrRef>& toks, std::vector<u32>& out, bool texts = false) {
        out.clear();
        if (texts) {
            st.tb.tokenize(toks[0].sv(), st.words);
            for (auto& w : st.words) out.push_back(st.vocab.intern(w));
            return;
        }
        for (auto& t : toks) out.push_back(st.vocab.intern(t.sv()));
    }
    std::shared_ptr<WordNetIndex> wn_;
    std::vector<std::unique_ptr<MeteorState>> states_;
    std::mutex mutex_;
};

}  // namespace tgm
