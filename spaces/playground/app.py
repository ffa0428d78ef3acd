import textgen_metrics.spaces

demo = textgen_metrics.spaces.playground_app()

if __name__ == "__main__":
    # Gradio refuses a larger upload before it is stored (the Space checks it again when scoring)
    demo.launch(max_file_size=textgen_metrics.spaces.limit("upload_mb") * 1_000_000)
