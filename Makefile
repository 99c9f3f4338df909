# rdma-fabric: `make test` runs everything CI runs; `make test-fast` is lint + unit.
SHELL := /bin/sh
PYTHON ?= python3
VENV := .venv
export RDMA_FABRIC_CACHE ?= /var/cache/rdma-fabric
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
export ANSIBLE_FORCE_COLOR ?= 0
export PY_COLORS ?= 0
IMAGES := bookworm trixie

.PHONY: help deps venv docker images lint unit molecule test test-fast clean

help:
	@echo "make test        everything CI runs: lint, unit, every role's Molecule scenarios"
	@echo "make test-fast   lint + unit tests (seconds; no docker)"
	@echo "make molecule    Molecule scenarios only (ROLES='rdma_stack' to pick)"
	@echo "make images      build the Debian base images (cached in $(RDMA_FABRIC_CACHE))"

deps:
	tests/harness/install-deps.sh

# The venv is rebuilt only when the pinned requirements change.
$(VENV)/.stamp: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

venv: $(VENV)/.stamp

docker:
	tests/harness/ensure-dockerd.sh

images: docker
	for suite in $(IMAGES); do tests/images/build-base-image.sh $$suite || exit 1; done

lint: venv
	yamllint --strict .
	ansible-lint
	ruff check .
	ruff format --check .

unit: venv
	tests/harness/run-pytest.sh tests/unit

molecule: venv images
	tests/harness/run-molecule.sh $(ROLES)

test-fast: lint unit

test: deps venv lint unit molecule

clean:
	rm -rf $(VENV) .cache
