.PHONY: test lint typecheck check demo bench

test:  ## install what the tests need, start PostgreSQL, run every test
	bash scripts/test.sh

lint:
	ruff check src tests benchmarks scripts

typecheck:
	mypy --strict src/

check: lint typecheck test

demo:
	plangate demo

bench:
	python3 benchmarks/run_all.py
