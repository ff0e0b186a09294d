"""Word stock for the synthetic memories and transcripts: English, domain jargon and code vocabulary.

Real agent memories mix plain English with identifiers, file paths, error messages and project-specific
names. Search cost depends on vocabulary size and on how skewed term frequencies are, so the generator draws
from these lists with a Zipf skew and adds a long tail of synthetic names (see corpus.py).
"""

from __future__ import annotations


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# General English that shows up in engineering notes (verbs, nouns, adjectives, adverbs).
ENGLISH: tuple[str, ...] = _words(
    """
    add adjust allow apply assume avoid break bump call change check clean close collect compare compute
    configure confirm convert copy create debug decide default defer delete deploy detect disable drop
    emit enable ensure expect expose fail fetch filter fix flush force format handle hide ignore import
    include keep leak limit load lock log lookup merge migrate mock move normalize open parse patch pin
    poll prefer prevent print probe publish queue raise read rebuild record reduce refresh reject release
    reload remove rename render reorder replace report request reset resolve restart restore retry return
    reuse revert rewrite rotate run sample save scan schedule send serialize set ship skip sort split start
    stop store stream strip submit swap sync tag test throttle time trace track trigger trim truncate tune
    unpack update upgrade upload validate verify wait warn watch wrap write yield
    account address agent alert amount answer api app approach argument array attempt attribute backend
    balance batch behaviour boundary branch bucket budget buffer bug build bundle cache call case cause
    change channel check chunk claim client clock code column command comment commit config connection
    consumer container context contract copy count counter cursor customer data database date deadline
    default dependency deploy detail device diff directory disk document domain draft driver duration
    edge entry environment error event example exception export feature field file filter fixture flag
    flow folder format frame function gateway graph group guard handler hash header heap helper history
    host hour image incident index input instance interface issue item job key label layer layout leader
    level library limit line link list listener lock log loop machine manifest map market memory message
    method metric migration minute mode model module monitor name namespace network node note number
    object offset option order origin output owner package page parameter parser partition patch path
    payload peer permission phase pipeline plan platform plugin pointer policy pool port prefix process
    producer profile project prompt property provider proxy query queue quota range rate reason record
    region registry release replica report repository request resource response result retry revision
    role root route row rule runner runtime schema scope screen script secret section segment selector
    server service session setting shard signal size snapshot socket source span spec stack stage state
    status step storage stream string subscriber suite summary table target task template tenant test
    thread threshold ticket timeout timestamp token tool topic trace transaction transport tree trigger
    type unit upstream user value variable vendor version view volume warning webhook window worker
    workflow workspace
    active async atomic stale broken cheap clean cold concurrent consistent correct critical current
    deprecated deterministic dirty duplicate eager empty expensive explicit external fast flaky fragile
    global hard hidden hot idempotent implicit incremental internal invalid large lazy legacy local
    malformed manual missing mutable nested noisy nullable obsolete optional orphaned partial pending
    persistent private public random readonly recent redundant remote required safe secure silent slow
    small stable static strict temporary transient unique unknown unsafe unused valid verbose
    always carefully currently eventually explicitly instead later locally manually never often only
    rarely silently sometimes twice usually
    """
)

# Technology names and tools: the proper nouns of engineering notes.
TECH: tuple[str, ...] = _words(
    """
    postgres sqlite redis kafka rabbitmq nginx docker kubernetes helm terraform ansible grafana prometheus
    jaeger sentry datadog elasticsearch opensearch tantivy lucene s3 gcs dynamodb cassandra mongodb
    mysql clickhouse snowflake bigquery airflow dagster celery rq sidekiq django flask fastapi starlette
    uvicorn gunicorn pydantic sqlalchemy alembic pytest hypothesis tox nox poetry pip uv ruff mypy black
    eslint prettier typescript webpack vite esbuild rollup react vue svelte nextjs tailwind jest vitest
    playwright cypress node deno bun npm pnpm yarn golang rust cargo tokio serde clippy java gradle maven
    kotlin spring jvm graalvm dotnet csharp swift xcode android gradle bazel make cmake ninja llvm gcc
    clang git github gitlab jenkins circleci buildkite argo flux vault consul etcd zookeeper envoy istio
    linkerd grpc protobuf graphql openapi oauth oidc jwt saml ldap stripe twilio sendgrid slack pagerduty
    opentelemetry statsd fluentd loguru structlog numpy pandas polars arrow parquet duckdb spark pytorch
    onnx triton cuda openssl libssl curl wget bash zsh systemd cron launchd homebrew apt alpine debian
    ubuntu macos windows wsl linux
    """
)

# Domains: each memory belongs to one; its words cluster so that searches have real competition.
DOMAINS: dict[str, tuple[str, ...]] = {
    "payments": _words(
        "payment invoice refund chargeback ledger settlement payout waterfall reserve tranche "
        "currency fx rounding cents idempotency capture authorization merchant acquirer dispute "
        "fee reconciliation statement balance escrow"
    ),
    "auth": _words(  # no "password": "password <words>: <path with a digit>" reads as a secret to gate import
        "login logout passkey token refresh session cookie csrf oauth scope consent mfa totp "
        "sso saml claim audience issuer expiry rotation keyring credential permission role"
    ),
    "build": _words(
        "build compile linker artifact cache wheel sdist lockfile toolchain target bundle minify "
        "sourcemap incremental hermetic sandbox remote runner matrix workflow pipeline release"
    ),
    "database": _words(
        "postgres migration schema index vacuum deadlock transaction isolation replica failover "
        "connection pool query planner sequential scan constraint foreign cascade backfill "
        "partition tablespace wal checkpoint"
    ),
    "caching": _words(
        "cache eviction ttl stale invalidation warmup hit miss lru memoize redis memcached "
        "stampede thundering herd key namespace serializer compression etag revalidate"
    ),
    "networking": _words(
        "dns tls certificate handshake proxy socket timeout keepalive retry backoff latency "
        "bandwidth packet mtu firewall ingress egress loadbalancer healthcheck websocket http2"
    ),
    "frontend": _words(
        "component render hydration state hook prop reducer selector stylesheet css theme dark "
        "mode toggle layout responsive accessibility aria focus modal tooltip router"
    ),
    "testing": _words(
        "test fixture mock stub flaky snapshot coverage assertion parametrize integration unit "
        "e2e harness seed deterministic timeout xdist parallel isolation teardown conftest"
    ),
    "observability": _words(
        "log metric trace span histogram counter gauge alert dashboard sampling cardinality "
        "exporter collector retention slo sli burn rate oncall incident postmortem"
    ),
    "infra": _words(
        "cluster node pod deployment rollout canary autoscaler quota namespace volume secret "
        "configmap ingress terraform state drift module provider region zone ami"
    ),
    "search": _words(
        "index tokenizer stemmer analyzer query ranking bm25 relevance boost facet shard replica "
        "segment merge commit reader writer schema field term posting"
    ),
    "ml": _words(
        "model training inference checkpoint epoch batch gradient optimizer learning rate loss "
        "embedding tokenizer dataset split validation overfit quantization tensor gpu"
    ),
    "cli": _words(
        "command flag argument subcommand stdin stdout stderr exit code prompt completion shell "
        "alias config dotfile pager color tty signal interrupt"
    ),
    "editor": _words(
        "buffer cursor selection undo redo keymap plugin syntax highlight lsp diagnostic "
        "completion snippet fold indent whitespace tab gutter minimap"
    ),
}

TAGS: tuple[str, ...] = _words(
    """
    ci db auth perf security flaky release infra frontend backend api cli docs testing migration cache
    billing search observability build deps config onboarding incident refactor tooling
    """
)

FILE_DIRS: tuple[str, ...] = _words(
    "src lib app pkg internal cmd server client core api web ui tests scripts tools services workers"
)
FILE_EXTS: tuple[str, ...] = (
    ".py",
    ".py",
    ".py",
    ".ts",
    ".tsx",
    ".go",
    ".rs",
    ".toml",
    ".yaml",
    ".sql",
    ".sh",
    ".md",
)

EXCEPTIONS: tuple[str, ...] = _words(
    """
    KeyError ValueError TypeError AttributeError IndexError RuntimeError TimeoutError ConnectionError
    PermissionError FileNotFoundError ImportError ModuleNotFoundError AssertionError RecursionError
    UnicodeDecodeError JSONDecodeError IntegrityError OperationalError ValidationError LockBusy
    NullPointerException IllegalStateException ECONNREFUSED ETIMEDOUT ENOENT EADDRINUSE EPIPE SIGSEGV
    OOMKilled CrashLoopBackOff ImagePullBackOff
    """
)

# Short error-message templates; {i} is an identifier, {p} a path, {n} a number, {t} a tech name.
ERROR_TEMPLATES: tuple[str, ...] = (
    "{e}: '{i}'",
    "{e}: {i}() got an unexpected keyword argument '{j}'",
    "{e}: cannot import name '{i}' from '{m}'",
    "{e}: [Errno 2] No such file or directory: '{p}'",
    "{e}: connection to {t} at 127.0.0.1:{n} refused",
    "{e}: timed out after {n} ms waiting for {i}",
    "{e}: 'NoneType' object has no attribute '{i}'",
    "panic: runtime error: index out of range [{n}] with length {n}",
    "error[E0502]: cannot borrow `{i}` as mutable because it is also borrowed as immutable",
    '{e}: duplicate key value violates unique constraint "{i}_pkey"',
    "{e}: database is locked",
    "{e}: expected {n} arguments, got {n} in {p}",
    "{e} in {p}:{n}: {i} is not defined",
    "Uncaught {e}: Cannot read properties of undefined (reading '{i}')",
)

# Syllables for the long tail of project-specific names (codenames, vendors, internal services).
SYLLABLES: tuple[str, ...] = _words(
    """
    ka ri zo mu te la vo ne shi pa do gu ri fen bar tor vex lin qua mar sol dri kel nox pry tam zen
    wic hal bri cor dax fla gri jor kip lum mek nor orb pel quin rav sif tul umb vey wex yor zal
    """
)
