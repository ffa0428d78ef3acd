import textgen_metrics.spaces

demo = textgen_metrics.spaces.playground_app()

if __name__ == "__main__":
    demo.launch()
