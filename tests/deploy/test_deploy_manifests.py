"""The compose file and the Kubernetes manifests, checked offline (no Docker, no cluster here).

The manifests are validated against the Kubernetes schemas that kubernetes-validate ships
(strict: an unknown or misspelt field fails), for every Kubernetes release it knows, with
the network cut off during validation. Then both are checked for what README "Deployment" and
deploy/README.md promise: health on /_stcore/health, resources, cookie stickiness, one shared cookieSecret, and
one Redis that every replica reaches at the same PE_REDIS_URL (the lesson store).
"""

from __future__ import annotations

import re
import shlex
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import kubernetes_validate
import pytest
import redis
import yaml
from kubernetes_validate.utils import all_versions
from support.proxy_harness import HAPROXY_CFG, sticky_cookie_name
from support.redis_harness import RedisServer, require_redis_server

from explorer.follow_store import REDIS_URL_VARIABLE, RedisStore, store_from_environment

pytestmark = pytest.mark.deploy

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "compose.yaml"
KUBERNETES = ROOT / "deploy" / "kubernetes"
README = ROOT / "README.md"
HEALTH_PATH = "/_stcore/health"
SECRET_VARIABLE = "STREAMLIT_SERVER_COOKIE_SECRET"
#: metadata.name of the app's Deployment and Service, and of Redis's.
APP = "pe-explorer"
REDIS = "redis"


def manifests() -> list[dict[str, Any]]:
    return [doc for path in sorted(KUBERNETES.glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text()) if doc]


def of_kind(kind: str, name: str = APP) -> dict[str, Any]:
    (found,) = [doc for doc in manifests() if doc["kind"] == kind and doc["metadata"]["name"] == name]
    return found


def the_container(name: str = APP) -> dict[str, Any]:
    (container,) = of_kind("Deployment", name)["spec"]["template"]["spec"]["containers"]
    return container


def haproxy_bind_port() -> int:
    return int(re.search(r"^\s*bind :(\d+)$", HAPROXY_CFG.read_text(), flags=re.MULTILINE).group(1))


# --- Kubernetes ---------------------------------------------------------------------------


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to reach another machine fails the test that asked for this."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network used: {args}")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


def test_the_manifests_validate_against_every_kubernetes_release_the_schemas_cover(no_network) -> None:
    docs = manifests()
    assert sorted((doc["kind"], doc["metadata"]["name"]) for doc in docs) == [
        ("Deployment", APP), ("Deployment", REDIS), ("HorizontalPodAutoscaler", APP), ("Ingress", APP),
        ("NetworkPolicy", REDIS), ("Service", APP), ("Service", REDIS),
    ]
    versions = all_versions()
    assert len(versions) >= 3, versions
    for doc in docs:
        for version in versions:
            # Raises on an invalid manifest, and on a kind or apiVersion with no schema.
            kubernetes_validate.validate(doc, version, strict=True)


def test_strict_validation_catches_a_misspelt_field(no_network) -> None:
    deployment = of_kind("Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError, match="readinesProbe"):
        kubernetes_validate.validate(deployment, all_versions()[-1], strict=True)


def test_the_deployment_probes_health_and_reserves_a_core_per_replica() -> None:
    container = the_container()
    port_names = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert port_names == {"http": 8501}, port_names
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        check = container[probe]["httpGet"]
        assert check["path"] == HEALTH_PATH and port_names[check["port"]] == 8501, (probe, check)
    # A restart ends every session on the replica: liveness gives up later than readiness.
    patience = {probe: container[probe]["periodSeconds"] * container[probe]["failureThreshold"]
                for probe in ("readinessProbe", "livenessProbe")}
    assert patience["livenessProbe"] >= 4 * patience["readinessProbe"], patience

    resources = container["resources"]
    assert resources["requests"]["cpu"] == resources["limits"]["cpu"] == "1", resources  # one process, one core
    assert set(resources["requests"]) == set(resources["limits"]) == {"cpu", "memory"}, resources
    assert of_kind("Deployment")["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True


def test_every_replica_reads_one_cookie_secret_from_the_secret_the_readme_creates() -> None:
    (variable,) = [env for env in the_container()["env"] if env["name"] == SECRET_VARIABLE]
    reference = variable["valueFrom"]["secretKeyRef"]
    assert reference.get("optional", False) is False, reference  # no secret, no start
    command = re.search(r"kubectl create secret generic (\S+) --from-literal=(\w+)=", README.read_text())
    assert command is not None, "README.md no longer says how to create the cookie secret"
    assert (command.group(1), command.group(2)) == (reference["name"], reference["key"]), reference


def test_the_service_selects_the_pods_and_the_ingress_sticks_by_cookie() -> None:
    deployment, service, ingress = of_kind("Deployment"), of_kind("Service"), of_kind("Ingress")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert service["spec"].get("sessionAffinity", "None") == "None", "stickiness is the ingress's cookie"
    (service_port,) = service["spec"]["ports"]
    assert service_port["targetPort"] in {port["name"] for port in the_container()["ports"]}

    annotations = ingress["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert annotations["nginx.ingress.kubernetes.io/affinity-mode"] == "persistent"  # never moves a live tab
    assert annotations["nginx.ingress.kubernetes.io/session-cookie-name"] == sticky_cookie_name()
    assert int(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600  # a lesson's WebSocket
    backends = [path["backend"]["service"] for rule in ingress["spec"]["rules"] for path in rule["http"]["paths"]]
    assert backends and all(
        backend["name"] == service["metadata"]["name"] and backend["port"]["name"] == service_port["name"]
        for backend in backends
    ), backends


def test_the_autoscaler_scales_the_deployment_on_cpu() -> None:
    autoscaler, deployment = of_kind("HorizontalPodAutoscaler"), of_kind("Deployment")
    target = autoscaler["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    (metric,) = autoscaler["spec"]["metrics"]
    assert metric["type"] == "Resource" and metric["resource"]["name"] == "cpu", metric
    assert 0 < metric["resource"]["target"]["averageUtilization"] <= 100, metric
    assert 2 <= autoscaler["spec"]["minReplicas"] <= deployment["spec"]["replicas"] < autoscaler["spec"]["maxReplicas"]


# --- compose ------------------------------------------------------------------------------


def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def test_compose_runs_the_replicas_behind_the_proxy_with_deploy_haproxy_cfg() -> None:
    services = compose()["services"]
    assert set(services) == {"app", "proxy", REDIS}, set(services)
    app, proxy = services["app"], services["proxy"]

    assert app["build"] == "." and (ROOT / "Dockerfile").is_file()
    assert "ports" not in app, "replicas are reached through the proxy only"
    assert "healthcheck" not in app, "the image's HEALTHCHECK on /_stcore/health is the one used"
    assert re.fullmatch(r"\$\{REPLICAS:-\d+\}", str(app["deploy"]["replicas"])), app["deploy"]
    assert app["deploy"]["resources"]["limits"]["cpus"] == "1", app["deploy"]  # one process, one core

    # The proxy's template finds the replicas as <service>:<port> through Docker's DNS.
    template = re.search(r"^\s*server-template \S+ 1-\d+ (\w+):(\d+) .*resolvers docker", HAPROXY_CFG.read_text(),
                         flags=re.MULTILINE)
    assert template is not None
    assert template.group(1) in services and template.group(2) in app["expose"], template.group(0)

    assert proxy["image"].startswith("haproxy:"), proxy["image"]
    source, target, mode = proxy["volumes"][0].split(":")
    assert (ROOT / source).resolve() == HAPROXY_CFG and target == "/usr/local/etc/haproxy/haproxy.cfg", proxy
    assert mode == "ro"
    (published,) = proxy["ports"]
    assert published.endswith(f":{haproxy_bind_port()}"), (published, haproxy_bind_port())
    assert proxy["depends_on"]["app"]["condition"] == "service_healthy", proxy["depends_on"]


def test_compose_gives_every_replica_the_same_cookie_secret_and_never_a_default_one() -> None:
    app = compose()["services"]["app"]
    value = app["environment"][SECRET_VARIABLE]
    # From the environment or .env, and compose refuses to start without it (":?").
    assert re.fullmatch(rf"\$\{{{SECRET_VARIABLE}:\?[^}}]+\}}", value), value
    for ignore_file in (".gitignore", ".dockerignore"):
        ignored = (ROOT / ignore_file).read_text().split()
        assert ".env" in ignored, f"{ignore_file}: the secret's .env must stay out of git and out of the image"


# --- the lesson store (Redis) ---------------------------------------------------------------


def redis_command(service_or_container: dict[str, Any]) -> list[str]:
    """redis-server's command line in compose (a string, split as compose splits it) or Kubernetes (args)."""
    command = service_or_container.get("command", service_or_container.get("args"))
    return shlex.split(command) if isinstance(command, str) else list(command)


def redis_options(command: list[str]) -> dict[str, str]:
    assert command[0] == "redis-server" and len(command) % 2 == 1, command
    return dict(zip(command[1::2], command[2::2], strict=True))


def mebibytes(quantity: str) -> float:
    """A Kubernetes memory quantity (128Mi, 1Gi) or a Redis one (64mb; Redis's mb is 1024 * 1024 bytes) in MiB."""
    number, unit = re.fullmatch(r"(\d+)([A-Za-z]*)", quantity).groups()
    return int(number) * {"Mi": 1, "Gi": 1024, "mb": 1, "gb": 1024}[unit]


def test_kubernetes_runs_one_redis_without_persistence_that_only_the_app_reaches() -> None:
    deployment, service, policy = of_kind("Deployment", REDIS), of_kind("Service", REDIS), of_kind("NetworkPolicy",
                                                                                                 REDIS)
    container = the_container(REDIS)
    assert deployment["spec"]["replicas"] == 1  # one store: two would each hold half of the steps
    redis_labels = deployment["spec"]["template"]["metadata"]["labels"]
    app_labels = of_kind("Deployment")["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= redis_labels.items()

    options = redis_options(redis_command(container))
    assert (options["--save"], options["--appendonly"]) == ("", "no"), options
    assert re.fullmatch(r"redis:\d+\.\d+[\w.-]*", container["image"]), container["image"]  # a pinned release
    (port,) = container["ports"]
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["exec"]["command"] == ["redis-cli", "ping"], container[probe]
    resources = container["resources"]
    assert set(resources["requests"]) == set(resources["limits"]) == {"cpu", "memory"}, resources
    # Redis's own bound on its data, with room for Redis itself under the container's limit.
    assert mebibytes(options["--maxmemory"]) * 1.5 <= mebibytes(resources["limits"]["memory"]), resources
    assert options["--maxmemory-policy"].startswith("volatile-"), "every step has a TTL: evict among them"
    assert deployment["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False

    # A ClusterIP Service named redis selects Redis's pods, and not the app's.
    assert service["spec"].get("type", "ClusterIP") == "ClusterIP"
    assert service["spec"]["selector"].items() <= redis_labels.items()
    assert not service["spec"]["selector"].items() <= app_labels.items()
    (service_port,) = service["spec"]["ports"]
    assert service_port["targetPort"] == port["name"] and port["containerPort"] == 6379, (service_port, port)

    # Only the app's pods may open a connection to it.
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= redis_labels.items()
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    (rule,) = policy["spec"]["ingress"]
    (source,) = rule["from"]
    assert source["podSelector"]["matchLabels"].items() <= app_labels.items()
    assert not source["podSelector"]["matchLabels"].items() <= redis_labels.items()
    assert [allowed["port"] for allowed in rule["ports"]] == [port["name"]], rule


def test_compose_runs_one_redis_without_persistence_never_published_and_healthy_before_the_app() -> None:
    services = compose()["services"]
    app, redis = services["app"], services[REDIS]
    options = redis_options(redis_command(redis))
    assert (options["--save"], options["--appendonly"]) == ("", "no"), options
    assert "ports" not in redis, "the replicas reach Redis on compose's network; the host never does"
    assert redis["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"], redis["healthcheck"]
    assert app["depends_on"][REDIS]["condition"] == "service_healthy", app["depends_on"]
    assert "replicas" not in redis.get("deploy", {}), "one store: two would each hold half of the steps"
    # The same Redis as in Kubernetes, with the same options.
    assert redis["image"] == the_container(REDIS)["image"]
    assert redis_command(redis) == redis_command(the_container(REDIS))


def test_compose_and_kubernetes_give_the_app_the_same_redis_url_naming_the_redis_service() -> None:
    in_compose = compose()["services"]["app"]["environment"][REDIS_URL_VARIABLE]
    (variable,) = [env for env in the_container()["env"] if env["name"] == REDIS_URL_VARIABLE]
    assert variable["value"] == in_compose, (variable, in_compose)

    parts = urlsplit(in_compose)
    assert parts.scheme == "redis" and parts.hostname == REDIS, in_compose
    assert parts.hostname in compose()["services"] and of_kind("Service", REDIS)["metadata"]["name"] == parts.hostname
    (service_port,) = of_kind("Service", REDIS)["spec"]["ports"]
    assert parts.port == service_port["port"], (in_compose, service_port)
    assert "--port" not in redis_options(redis_command(compose()["services"][REDIS]))  # Redis's 6379, then
    assert parts.port == 6379
    # The app reads it as a Redis store at that address (without connecting to anything).
    store = store_from_environment({REDIS_URL_VARIABLE: in_compose})
    assert isinstance(store, RedisStore) and store.where == f"{REDIS}:6379"


def test_the_redis_options_start_a_real_redis_server() -> None:
    """Debian's redis-server (7.0 here) takes the options compose and Kubernetes give the image."""
    require_redis_server()
    options = redis_options(redis_command(compose()["services"][REDIS]))
    with RedisServer(*[word for pair in options.items() for word in pair]) as server:
        client = redis.Redis.from_url(server.url, decode_responses=True)
        settings = {key: client.config_get(key)[key] for key in ("save", "appendonly", "maxmemory-policy")}
        assert settings == {"save": "", "appendonly": "no", "maxmemory-policy": options["--maxmemory-policy"]}
        assert int(client.config_get("maxmemory")["maxmemory"]) == mebibytes(options["--maxmemory"]) * 1024**2
