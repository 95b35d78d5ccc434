# One image for every devhealth service: `devhealth collector|processor|sink|query`.
# Build: docker build -t devhealth:0.1.0 .
# The last stage is the production image: launcher's devhealth.jar and lib/, no simulators and no test
# libraries (launcher's ProductionArtifactIT checks that lib/). The `demo` stage is the demo artifact
# (`devhealth demo`, `simulate-node`) for docker-compose's simulated node:
#   docker build --target demo -t devhealth-demo:0.1.0 .

# Base images are pinned by digest (the multi-platform index of the tag): a tag can be re-pushed, a
# digest cannot, so a rebuild of a release gets the same JDK and JRE layers. The tag stays in front for
# the reader and for the updater (.github/dependabot.yml proposes each new digest as a change to review).
# Build with an image SBOM and provenance attached (BuildKit scans the whole image: OS packages, the
# JRE and every jar):
#   docker buildx build --sbom=true --provenance=mode=max -t devhealth:0.1.0 .
# The production image also carries the application's own CycloneDX SBOM at
# /opt/devhealth/sbom/devhealth.cdx.json (launcher/target/bom.json, which ProductionArtifactIT checks
# against lib/ jar by jar), so it can be read without the registry's attestations.

# --- build stage: the Maven wrapper pins Maven ---
FROM eclipse-temurin:17.0.16_8-jdk-jammy@sha256:47d330891da01c4b17fb6af5018d9a7bad33f7a252a91dde890c10d4de5ebd33 AS build
WORKDIR /src
COPY .mvn/ .mvn/
COPY mvnw pom.xml ./
COPY schemas/ schemas/
COPY service-runtime/ service-runtime/
COPY simulators/ simulators/
COPY testkit/ testkit/
COPY node-collector/ node-collector/
COPY stream-processor/ stream-processor/
COPY query-api/ query-api/
COPY sink-apiserver/ sink-apiserver/
COPY launcher/ launcher/
COPY demo/ demo/
# Not built here (tests only); the reactor reads every module's pom.
COPY testkit-tests/pom.xml testkit-tests/
COPY fault-tests/pom.xml fault-tests/
COPY benchmarks/pom.xml benchmarks/
# gcc builds the stub NVML library of the simulators, which only the demo stage ships (production
# mounts the host's libnvidia-ml.so.1).
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
RUN ./mvnw -B -q -Dmaven.test.skip=true -pl launcher,demo -am package

# --- JRE only, non-root: what both images run on ---
FROM eclipse-temurin:17.0.16_8-jre-jammy@sha256:e90fd2b084488c0ffdd22610d44c1579e63b585c7fb83489fd815c0dc5b4e1f7 AS jre
RUN groupadd --system --gid 65532 devhealth && useradd --system --uid 65532 --gid 65532 --no-create-home devhealth
WORKDIR /opt/devhealth
USER 65532:65532

# --- demo image: the devhealth command plus demo and simulate-node, with the simulators ---
FROM jre AS demo
COPY --from=build /src/demo/target/devhealth-demo.jar ./devhealth-demo.jar
COPY --from=build /src/demo/target/lib/ ./lib/
ENTRYPOINT ["java", "-XX:+ExitOnOutOfMemoryError", "-jar", "/opt/devhealth/devhealth-demo.jar"]
CMD ["--help"]

# --- production image (the default target) ---
FROM jre AS production
COPY --from=build /src/launcher/target/devhealth.jar ./devhealth.jar
COPY --from=build /src/launcher/target/lib/ ./lib/
COPY --from=build /src/launcher/target/bom.json ./sbom/devhealth.cdx.json
LABEL org.opencontainers.image.title="devhealth" \
      org.opencontainers.image.description="devhealth services: collector, processor, sink, query" \
      org.opencontainers.image.version="0.1.0" \
      io.devhealth.sbom="/opt/devhealth/sbom/devhealth.cdx.json"
EXPOSE 8080
ENTRYPOINT ["java", "-XX:+ExitOnOutOfMemoryError", "-jar", "/opt/devhealth/devhealth.jar"]
CMD ["--help"]
