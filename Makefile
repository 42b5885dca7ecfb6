# Partner API v3 conformance kit. `make run` starts the simulator, `make test`
# runs every test; `make help` lists the rest.

GO          ?= go
# A release is an annotated tag vX.Y.Z (README, "Make a release"): on it
# git describe gives the tag, after it v1.2.0-3-gabc1234, with local changes
# -dirty; only a clean vX.Y.Z certifies. COMMIT is the commit built, with
# -dirty for a modified tree (untracked files aside, as git describe): the
# certificate records it, so a build relabelled with VERSION= is told apart
# from the tagged one. Both are linked in because GOFLAGS=-buildvcs=false
# (and a build outside a checkout, such as an image's) stamps no revision.
# DESCRIBE is what git says of the tree, whatever VERSION says: a build whose
# VERSION differs (VERSION=v9.0.0 make build) is relabelled, and its
# --version and reports say so; it does not certify.
DESCRIBE    := $(shell git describe --tags --always --dirty 2>/dev/null)
VERSION     ?= $(or $(DESCRIBE),dev)
COMMIT      ?= $(shell c=$$(git rev-parse HEAD 2>/dev/null) && { git update-index -q --refresh >/dev/null 2>&1; git diff-index --quiet HEAD -- 2>/dev/null || c=$$c-dirty; echo $$c; })
LDFLAGS     := -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.describe=$(DESCRIBE)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Helm for the chart (cmd/simulator/chart), through the module proxy like
# staticcheck. v3.20.2 is the newest whose go.mod asks for go 1.25 (v3.21 and
# v3.22 ask for go 1.26), so any toolchain the kit supports builds it without
# fetching another; the first build takes 1-2 min here, later runs about 1 s.
# cmd/simulator/chart's tests build the same (TestHelmPinIsTheMakefiles).
HELM        := helm.sh/helm/v3/cmd/helm@v3.20.2
CHART       := cmd/simulator/chart
# The OpenAPI linter (npm; Node.js 20 or later), as fixtures/openapi_test.go pins it.
REDOCLY     := @redocly/cli@2.77.0
BIN         := bin
ARGS        ?=
IMAGE_REPO  ?= partner-v3
IMAGE_TAG   ?= latest

.PHONY: chart matrix help run build build-simulator build-conformance test check fmt vet lint lint-openapi fuzz bench load soak conformance image mutation clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

run: build-simulator ## build and start the simulator on https://127.0.0.1:8443 (extra flags: ARGS="--seed 7")
	$(BIN)/simulator $(ARGS)

build: build-simulator build-conformance ## build bin/simulator and bin/conformance (static)

build-simulator:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/simulator ./cmd/simulator

build-conformance:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/conformance ./cmd/conformance

# TEST_COUNT runs every test that many times (TEST_COUNT=3 make test, or
# through .ci/run: a flake hunt); the timeout grows with it.
TEST_COUNT ?= 1

test: ## vet, then every test with the race detector (includes the conformance suite against the simulator; TEST_COUNT=3 for a flake hunt)
	$(GO) vet ./...
	$(GO) test -race -count=$(TEST_COUNT) -timeout $(shell echo $$((30 * $(TEST_COUNT))))m ./...

matrix: ## prove every cell of the suite's matrix with its violation switch (make test samples them under -race); about a minute
	MATRIX_SAMPLE=1 $(GO) test -count=1 -run '^TestMatrixCells' ./cmd/conformance

check: fmt lint test ## gofmt, staticcheck, vet and test: what a change must pass

fmt: ## fail if gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet: ## go vet
	$(GO) vet ./...

lint: lint-openapi ## staticcheck (fetched through the module proxy, pinned) and lint-openapi
	$(GO) run $(STATICCHECK) ./...

lint-openapi: ## lint fixtures/openapi.yaml with Redocly CLI's strictest rules (npx, pinned)
	npx --yes $(REDOCLY) lint --extends=recommended-strict fixtures/openapi.yaml

FUZZTIME    ?= 30s
FUZZ_TARGETS := simulator/partnerapi:FuzzDecodeContact simulator/partnerapi:FuzzDecodeCampaignList simulator/partnerapi:FuzzPartnerRequest simulator/jsonbody:FuzzScanFields simulator/controlapi:FuzzAdminBody

fuzz: ## fuzz every request decoder in turn, FUZZTIME each (default 30s); crashers land in the package's testdata/fuzz (make test runs them)
	@for t in $(FUZZ_TARGETS); do \
		echo "== $$t ($(FUZZTIME))"; \
		$(GO) test -run='^$$' -fuzz="^$${t##*:}\$$" -fuzztime=$(FUZZTIME) ./$${t%%:*} || exit 1; \
	done

BENCHTIME     ?= 1s
BENCHCOUNT    ?= 1
SOAK_DURATION ?= 5m

bench: ## benchmarks per operation with allocations (BENCHTIME=1s BENCHCOUNT=1; compare runs with benchstat)
	$(GO) test -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) -count=$(BENCHCOUNT) ./simulator/...

load: ## req/s and p50/p99/p999 per operation against a bare HTTPS server (ARGS="--base-url https://... --redis-url ...")
	$(GO) run -ldflags "$(LDFLAGS)" ./cmd/load $(ARGS)

soak: ## the soak test in its long form: accounts at the limit for SOAK_DURATION (5m), the spec's 1-minute window
	SOAK_DURATION=$(SOAK_DURATION) $(GO) test -run='^TestSoak$$' -count=1 -v -timeout 0 ./simulator/sim

conformance: build-conformance ## run the normative suite against a URL: make conformance ARGS="--base-url https://... --api-key ..."
	$(BIN)/conformance $(ARGS)

image: ## build the simulator and runner images FROM scratch (needs a Docker engine; pulls nothing)
	$(GO) run ./cmd/image -repo $(IMAGE_REPO) -tag $(IMAGE_TAG) -version $(VERSION) -commit $(COMMIT) -describe $(DESCRIBE)

# Mutation testing (docs/mutation.md): gremlins mutates the simulator's own
# code, one package at a time, and the conformance suite is the test: each
# package's TestMutationSuite (build tag mutation) runs it against the
# mutated simulator. GOFLAGS makes that test the only one go test runs
# (-run), never takes a cached result for the coverage step (-count=1:
# gremlins times the steps from it) and keeps vet from failing a mutant
# (-vet=off). DOCKER_HOST: the coverage step of package simulator runs every
# test binary below it, and simulator/container's TestMain would build images.
# cmd/mutationreport then completes gremlins' figures (mutants that did not
# compile, mutants in case expressions gremlins never tests) and lists the
# survivors.
GREMLINS                     := github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
MUTATION_PKGS                ?= simulator simulator/partnerapi simulator/edge simulator/controlapi simulator/httpjson simulator/jsonbody simulator/inmem
MUTATION_WORKERS             ?= 1
MUTATION_TIMEOUT_COEFFICIENT ?= 10
MUTATION_DIR                 ?= reports/mutation
# More gremlins flags, e.g. MUTATION_ARGS=--dry-run (find the mutants and
# their coverage, run nothing).
MUTATION_ARGS                ?=

mutation: ## mutation testing of the simulator, the suite as the test; lists the survivors (about 40 min; MUTATION_PKGS, MUTATION_WORKERS=1)
	@mkdir -p $(MUTATION_DIR)
	$(GO) vet -tags mutation ./simulator/internal/mutation $(addprefix ./,$(MUTATION_PKGS))
	@for p in $(MUTATION_PKGS); do \
		echo "== gremlins: $$p"; \
		GOFLAGS='-run=^TestMutationSuite$$ -count=1 -vet=off' DOCKER_HOST=unix:///nonexistent.sock \
		$(GO) run $(GREMLINS) unleash ./$$p --tags mutation --exclude-files / \
			--workers $(MUTATION_WORKERS) --timeout-coefficient $(MUTATION_TIMEOUT_COEFFICIENT) \
			--output $(abspath $(MUTATION_DIR))/$$(echo $$p | tr / -).json $(MUTATION_ARGS) || exit 1; \
	done
	$(GO) run ./cmd/mutationreport $(foreach p,$(MUTATION_PKGS),$(p)=$(MUTATION_DIR)/$(subst /,-,$(p)).json) >$(MUTATION_DIR)/summary.txt
	@cat $(MUTATION_DIR)/summary.txt

chart: ## lint the Helm chart and print its manifests with the default values (VALUES=my-values.yaml for yours)
	$(GO) run $(HELM) lint --strict $(CHART) $(if $(VALUES),-f $(VALUES))
	$(GO) run $(HELM) template partner-simulator $(CHART) $(if $(VALUES),-f $(VALUES))

clean: ## remove what the kit writes: binaries, reports (conformance-report/ is --report-dir's default), the generated certificate
	rm -rf $(BIN) reports conformance-report .simdata
