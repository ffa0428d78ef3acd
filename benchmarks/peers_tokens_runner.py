"""Runs one peer's metric over the examples, its judge pointed at the loopback recorder: run by
``tokens_vs_peers.py`` with the peers' own interpreter (``/work/peers-venv``), as

    python peers_tokens_runner.py TOOL METRIC BASE_URL EXAMPLES_JSON

and prints ``{"scores": [...], "errors": [...]}`` as its last line. Each peer runs with its
defaults (model ``gpt-4o``), one example at a time."""

import asyncio
import json
import sys
import traceback

MODEL = "gpt-4o"
GEVAL_CRITERIA = ("Coherence: the summary is well-structured and well-organized, building from sentence "
                  "to sentence into a coherent body of information about the source.")

RAGAS = {"faithfulness": "Faithfulness", "answer_relevance": "AnswerRelevancy",
         "answer_correctness": "AnswerCorrectness", "context_precision": "ContextPrecisionWithReference",
         "context_recall": "ContextRecall", "context_relevance": "ContextRelevance",
         "summarization": "SummaryScore"}
DEEPEVAL = {"faithfulness": "FaithfulnessMetric", "answer_relevance": "AnswerRelevancyMetric",
            "context_precision": "ContextualPrecisionMetric", "context_recall": "ContextualRecallMetric",
            "context_relevance": "ContextualRelevancyMetric", "hallucination": "HallucinationMetric",
            "bias": "BiasMetric", "toxicity": "ToxicityMetric", "summarization": "SummarizationMetric",
            "g_eval": "GEval"}
VALOR = {"faithfulness": "compute_faithfulness", "answer_relevance": "compute_answer_relevance",
         "answer_correctness": "compute_answer_correctness", "context_precision": "compute_context_precision",
         "context_recall": "compute_context_recall", "context_relevance": "compute_context_relevance",
         "hallucination": "compute_hallucination", "bias": "compute_bias", "toxicity": "compute_toxicity",
         "summary_coherence": "compute_summary_coherence"}
TOOLS = {"ragas": RAGAS, "deepeval": DEEPEVAL, "valor": VALOR}


def run_ragas(metric, base_url, examples):
    import ragas.metrics.collections as collections
    from openai import AsyncOpenAI
    from ragas.embeddings import embedding_factory
    from ragas.llms import llm_factory

    client = AsyncOpenAI(base_url=base_url, api_key="sk-dummy")
    llm = llm_factory(MODEL, client=client)
    cls = getattr(collections, RAGAS[metric])
    kwargs = {}
    if metric in ("answer_relevance", "answer_correctness"):
        kwargs["embeddings"] = embedding_factory("openai", model="text-embedding-3-small", client=client)
    scorer = cls(llm=llm, **kwargs)

    def args(ex):
        q, r = {"user_input": ex.get("query")}, {"response": ex["prediction"]}
        ctx, ref = {"retrieved_contexts": ex.get("contexts")}, {"reference": ex.get("reference")}
        return {"faithfulness": lambda: {**q, **r, **ctx}, "answer_relevance": lambda: {**q, **r},
                "answer_correctness": lambda: {**q, **r, **ref}, "context_precision": lambda: {**q, **ref, **ctx},
                "context_recall": lambda: {**q, **ctx, **ref}, "context_relevance": lambda: {**q, **ctx},
                "summarization": lambda: {"reference_contexts": [ex["source"]], **r}}[metric]()

    async def all_examples():  # one event loop: the client's pooled connections stay valid
        return [(await scorer.ascore(**args(ex))).value for ex in examples]

    return asyncio.run(all_examples())


def run_deepeval(metric, base_url, examples):
    import deepeval.metrics as metrics
    from deepeval.models import GPTModel
    from deepeval.test_case import LLMTestCase, LLMTestCaseParams

    model = GPTModel(model=MODEL, base_url=base_url, api_key="sk-dummy")
    cls = getattr(metrics, DEEPEVAL[metric])
    if metric == "g_eval":
        scorer = cls(name="Coherence", criteria=GEVAL_CRITERIA, model=model, async_mode=False,
                     evaluation_params=[LLMTestCaseParams.INPUT, LLMTestCaseParams.ACTUAL_OUTPUT])
    else:
        scorer = cls(model=model, async_mode=False)
    out = []
    for ex in examples:
        if metric in ("summarization", "g_eval"):
            case = LLMTestCase(input=ex["source"], actual_output=ex["prediction"])
        else:
            case = LLMTestCase(input=ex["query"], actual_output=ex["prediction"], expected_output=ex["reference"],
                               retrieval_context=ex["contexts"], context=ex["contexts"])
        out.append(scorer.measure(case))
    return out


def run_valor(metric, base_url, examples):
    from openai import OpenAI
    from valor_lite.text_generation import Context, Evaluator, QueryResponse

    evaluator = Evaluator.openai(model_name=MODEL, api_key="sk-dummy")
    evaluator.client.client = OpenAI(base_url=base_url, api_key="sk-dummy")
    out = []
    for ex in examples:
        if metric == "summary_coherence":
            resp = QueryResponse(query=ex["source"], response=ex["prediction"])
        else:
            resp = QueryResponse(query=ex["query"], response=ex["prediction"],
                                 context=Context(groundtruth=[ex["reference"]], prediction=ex["contexts"]))
        result = getattr(evaluator, VALOR[metric])(resp)
        out.append(result.to_dict() if hasattr(result, "to_dict") else str(result))
    return out


def main():
    tool, metric, base_url, path = sys.argv[1:5]
    with open(path) as f:
        examples = json.load(f)
    runner = {"ragas": run_ragas, "deepeval": run_deepeval, "valor": run_valor}[tool]
    errors = []
    try:
        scores = runner(metric, base_url, examples)
    except Exception as e:  # the table shows a tool's failure rather than a figure
        scores = []
        errors.append(f"{type(e).__name__}: {e}"[:500])
        traceback.print_exc()
    print(json.dumps({"scores": scores, "errors": errors}, default=str))


if __name__ == "__main__":
    main()
