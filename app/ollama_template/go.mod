module modellens/ollama_template

go 1.19
