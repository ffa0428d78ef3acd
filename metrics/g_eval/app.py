import os

import textgen_metrics.spaces

demo = textgen_metrics.spaces.metric_app(os.path.dirname(os.path.abspath(__file__)))

if __name__ == "__main__":
    demo.launch()
