"""The public API beside the metric functions, as plain imports: ``textgen_metrics.<name>`` of
any name here (imported on first use of one of them; the metric functions come from
:mod:`textgen_metrics.registry`). Each line is ``from .module import name as name``, the form
type checkers read as a re-export.
"""

from .audits.plan import AuditPlan as AuditPlan
from .audits.run import audit as audit
from .comparison import compare as compare
from .cost import estimate_cost as estimate_cost
from .gates import assert_gate as assert_gate
from .gates import assert_no_regression as assert_no_regression
from .gates import gate as gate
from .gates import regression as regression
from .human_agreement import agreement as agreement
from .judges import get_judge as get_judge
from .judges.anthropic import AnthropicJudge as AnthropicJudge
from .judges.base import JudgeError as JudgeError
from .judges.base import JudgeFatalError as JudgeFatalError
from .judges.base import Usage as Usage
from .judges.cache import JudgeCache as JudgeCache
from .judges.function import CallableJudge as CallableJudge
from .judges.local import HFJudge as HFJudge
from .judges.openai import AzureOpenAIJudge as AzureOpenAIJudge
from .judges.openai import GeminiJudge as GeminiJudge
from .judges.openai import OpenAIJudge as OpenAIJudge
from .lexical.meteor import MeteorScorer as MeteorScorer
from .lexical.rouge import RougeAggregator as RougeAggregator
from .lexical.rouge import RougeScorer as RougeScorer
from .meta.evaluate import meta_evaluate as meta_evaluate
from .meta.run import meta_eval as meta_eval
from .metric import Metric as Metric
from .metric import Result as Result
from .metric import Stats as Stats
from .registry import get_metric as get_metric
from .semantic.bertscore import BertScorer as BertScorer
from .significance import bootstrap_ci as bootstrap_ci
from .stats.audit import position_audit as position_audit
from .tokenizers import get_tokenizer as get_tokenizer

# identifiers only: pytest's assertion rewriting adds names such as "@py_builtins" to the modules of
# a package that registers a pytest11 plugin (this one does: the quality gates' fixture)
_NAMES = tuple(name for name in dir() if name.isidentifier() and not name.startswith("_"))
