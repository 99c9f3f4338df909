# rdma-fabric: `make test` runs everything CI runs; `make test-fast` is lint + the pure unit tests.
SHELL := /bin/sh
PYTHON ?= python3
VENV := .venv
export RDMA_FABRIC_CACHE ?= /var/cache/rdma-fabric
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
export ANSIBLE_FORCE_COLOR ?= 0
export PY_COLORS ?= 0
IMAGES := bookworm trixie
LAB := $(PYTHON) tests/lab/rdmalab.py
# The lab runs under TCG emulation: Mitogen makes each module run ~8x cheaper there;
# its bootstrap on a loaded machine can take longer than the default 10 s timeout.
# RDMA_LAB_MITOGEN=0 runs the lab with Ansible's own strategy.
ifneq ($(RDMA_LAB_MITOGEN),0)
LAB_ANSIBLE_ENV = ANSIBLE_TIMEOUT=60 ANSIBLE_STRATEGY_PLUGINS=$(abspath $(wildcard $(VENV)/lib/python3*/site-packages/ansible_mitogen/plugins/strategy)) ANSIBLE_STRATEGY=mitogen_linear
endif

.PHONY: help deps venv docker images lab-image lint sanity changelog unit integration molecule ee e2e bench fleet fleet-slices fleet-budget lab-up lab-down demo test test-fast clean

help:
	@echo "make demo        bring up the Soft-RoCE lab (3 VMs) and run site.yml against it"
	@echo "make test        everything CI runs: lint, unit, every role's Molecule scenarios, the EE, the lab e2e"
	@echo "make test-fast   lint + the pure unit tests (tests/unit: in-process, no docker)"
	@echo "make integration tests that run the Ansible CLIs, tools and stand-ins (tests/integration)"
	@echo "make molecule    Molecule scenarios only (ROLES='rdma_stack' to pick)"
	@echo "make ee          build the execution environment image (AWX, ansible-navigator) and run playbooks in it"
	@echo "make sanity      ansible-test sanity on the rdma.fabric collection (part of make lint)"
	@echo "make changelog   fold changelogs/fragments into the collection's CHANGELOG.md"
	@echo "make images      build the Debian base images (cached in $(RDMA_FABRIC_CACHE))"
	@echo "make lab-image   build the lab VM image (cached in $(RDMA_FABRIC_CACHE)/lab)"
	@echo "make lab-up      boot the lab VMs (idempotent); make lab-down stops them"
	@echo "make e2e         lab end-to-end test: lab up, site.yml twice, real traffic, --check --diff, a fault run, lab down"
	@echo "make fleet       FLEET=16 containers as 8-rail GPU servers + 8 stand-in leaves: site.yml twice, --check, faults"
	@echo "make fleet-slices  FLEET=16 SLICES=4: the per-host stages as a sliced AWX job, verify refused in a slice, then the whole site.yml"
	@echo "make fleet-budget  make test's fleet: 16 hosts, first run, one slow rail planted, second run (changed=0, the rail named), timed (target 6 min)"
	@echo "make bench       pair_rounds and rdma_verify's controller work (32 x 8, 4,096 x 8), the cabling judge; BENCH_ARGS=--run: the lab's"

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

COLLECTION := collections/ansible_collections/rdma/fabric

# check_host_python: the Python that runs on managed hosts (modules, module_utils,
# roles/*/files scripts) parses and runs on Python 3.8 (vermin), beyond ruff's target.
lint: venv sanity
	yamllint --strict .
	ansible-lint
	ruff check .
	ruff format --check .
	python tests/harness/check_host_python.py

# Every ansible-test sanity test, zero errors; the CHANGELOG.md in git is the one
# antsibull-changelog generates from changelogs/changelog.yaml.
sanity: venv
	tests/harness/run-sanity.sh
	mkdir -p .cache && cd $(COLLECTION) && antsibull-changelog generate --output $(CURDIR)/.cache/CHANGELOG.md \
	  && cmp CHANGELOG.md $(CURDIR)/.cache/CHANGELOG.md \
	  || { echo "CHANGELOG.md is not generated from changelogs/: run make changelog"; exit 1; }

# Fragments (changelogs/fragments/*.yml) go into the release galaxy.yml names.
changelog: venv
	cd $(COLLECTION) && antsibull-changelog release --update-existing

# On every core (pytest-xdist, each test file on one worker: a file's module-scoped
# fixtures run once). A venv made before pytest-xdist was pinned runs them serially.
XDIST = $(if $(shell $(VENV)/bin/python -c 'import xdist' 2>/dev/null && echo y),-n auto --dist loadfile)

# tests/unit: pure, in-process tests (parsers, planners, judges, filters, modules with
# their tools' outputs); tests/integration: tests that run the Ansible CLIs, the real
# tools (OpenSM on ibsim, a browser) or the stand-ins as processes. Both run in make test.
unit: venv
	tests/harness/run-pytest.sh tests/unit $(XDIST)

integration: venv
	tests/harness/run-pytest.sh tests/integration $(XDIST)

molecule: venv images
	tests/harness/run-molecule.sh $(ROLES)

# Build (or find cached) the lab VM image; make lab-up and make e2e build it when missing.
lab-image:
	$(LAB) image

# The execution environment (execution-environment.yml) for AWX / Automation Platform and
# ansible-navigator: built with ansible-builder FROM rdma-fabric/debian:bookworm once per
# input hash (the image's label), then playbooks run in it with docker.
ee: venv images
	$(VENV)/bin/python tests/harness/build_ee.py
	tests/harness/run-pytest.sh tests/ee

lab-up: deps venv
	$(LAB) up

lab-down:
	$(LAB) down

# ansible-core 2.19 refuses a non-blocking stdin (CI, nohup, a background shell): the
# playbook reads /dev/null. stage_clock prints each stage with the elapsed time.
DEMO_ANSIBLE_ENV = ANSIBLE_CALLBACK_PLUGINS=$(CURDIR)/tests/lab/callback_plugins ANSIBLE_CALLBACKS_ENABLED=ansible.builtin.timer,stage_clock,rdma.fabric.preload
demo: lab-up
	@rc=0; $(LAB_ANSIBLE_ENV) $(DEMO_ANSIBLE_ENV) ansible-playbook site.yml </dev/null || rc=$$?; \
	echo; echo "Verification report: $(CURDIR)/reports/latest/report.md"; \
	cat reports/latest/report.md 2>/dev/null || echo "(no report was written)"; \
	echo; echo "The lab is still up (make lab-down stops it; $(LAB) ssh lab1 opens a shell)."; \
	exit $$rc

e2e: venv
	RDMA_LAB_ANSIBLE_ENV="$(LAB_ANSIBLE_ENV)" tests/harness/run-pytest.sh tests/lab -s

# Not a test: prints figures (the schedule, rdma_verify's controller work at 32 x 8 and
# 4,096 x 8). BENCH_ARGS=--run adds verify.yml's overhead in the lab (up, with its
# Soft-RoCE links: make demo).
bench: venv
	$(LAB_ANSIBLE_ENV) $(VENV)/bin/python tests/bench/bench_verify.py $(BENCH_ARGS)
	$(VENV)/bin/python tests/bench/bench_cabling.py --only indexed
	$(VENV)/bin/python tests/fleet/bench_fleet.py $(if $(BENCH_FLEET),--run $(BENCH_FLEET))

# The fleet (tests/fleet, README "Rack scale"): FLEET containers of the project's Debian
# image as 8-rail GPU servers with recorded ConnectX trees and the NIC tools' stand-ins,
# 8 stand-in leaves; site.yml first run, second run (changed=0), --check --diff, then the
# fault plan judged by verify.yml; torn down after. FLEET_VERIFY_MODE: full or quick.
FLEET ?= 16
fleet: venv images
	RDMA_FLEET=$(FLEET) $(if $(FLEET_VERIFY_MODE),RDMA_FLEET_VERIFY_MODE=$(FLEET_VERIFY_MODE)) \
	    tests/harness/run-pytest.sh tests/fleet/test_fleet.py -v

# A sliced job on the fleet (tests/fleet/test_fleet_slices.py, README "Rack scale"): the
# per-host stages in SLICES slices side by side, each on its part of the inventory as
# AWX's job slicing deals it; verify in a slice refused; site.yml on the whole inventory.
SLICES ?= 4
fleet-slices: venv images
	RDMA_FLEET=$(FLEET) RDMA_FLEET_SLICES=$(SLICES) \
	    tests/harness/run-pytest.sh tests/fleet/test_fleet_slices.py -v -s

# make test's fleet (tests/fleet/test_fleet_budget.py): 16 hosts, first run, one fault
# planted, second run (changed=0, the fault named), timed.
# The target is 360 s (the test's default): 334.6 s on a quiet machine with
# rdma.fabric.preload (376-385 s before it); .ci/run measured up to 19 % above the quiet
# figure, so make test holds it to 420 s, the margin for a slower CI machine (README
# "Rack scale").
fleet-budget: venv images
	RDMA_FLEET=16 RDMA_FLEET_BUDGET_S=420 \
	    tests/harness/run-pytest.sh tests/fleet/test_fleet_budget.py -v -s

test-fast: lint unit

# The cold builds (Molecule base images, the lab VM image: debootstrap, network and disk
# bound) run in the background while lint, unit and integration (CPU) run; molecule, ee
# and e2e wait.
# The sub-makes take the venv as it is (-o): this make has just made it (or was told
# not to, with -o, which make does not pass down).
# Each phase is timed (tests/harness/phase.sh; Molecule per scenario, the background builds
# too) and the table is printed at the end, passed or failed (.cache/phase-times).
PHASE := tests/harness/phase.sh run
SUBMAKE := $(MAKE) --no-print-directory -o $(VENV)/.stamp
test: export RDMA_FABRIC_PHASE_LOG = $(CURDIR)/.cache/phase-times
test:
	@tests/harness/phase.sh reset
	@rc=0; { $(PHASE) deps $(MAKE) --no-print-directory deps \
	  && $(PHASE) venv $(MAKE) --no-print-directory venv \
	  && tests/harness/with-background.sh \
	    images '$(MAKE) --no-print-directory images' \
	    lab-image '$(MAKE) --no-print-directory lab-image' \
	    -- sh -c "$(PHASE) lint $(SUBMAKE) lint && $(PHASE) unit $(SUBMAKE) unit && $(PHASE) integration $(SUBMAKE) integration" \
	  && $(PHASE) molecule $(SUBMAKE) molecule \
	  && $(PHASE) ee $(SUBMAKE) ee \
	  && $(PHASE) fleet $(SUBMAKE) fleet-budget \
	  && $(PHASE) e2e $(SUBMAKE) e2e; } || rc=$$?; \
	tests/harness/phase.sh table; exit $$rc

clean:
	rm -rf $(VENV) .cache
