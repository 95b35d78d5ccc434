# One image for every devhealth service: `devhealth collector|processor|sink|query`.
# Build: docker build -t devhealth:0.1.0 .
# The last stage is the production image: launcher's devhealth.jar and lib/, no simulators and no test
# libraries (launcher's ProductionArtifactIT checks that lib/). The `demo` stage is the demo artifact
# (`devhealth demo`, `simulate-node`) for docker-compose's simulated node:
#   docker build --target demo -t devhealth-demo:0.1.0 .

# --- build stage: the Maven wrapper pins Maven; the JDK image is pinned by version ---
FROM eclipse-temurin:17.0.15_6-jdk-jammy AS build
WORKDIR /src
COPY .mvn/ .mvn/
COPY mvnw pom.xml ./
COPY schemas/ schemas/
COPY service-runtime/ service-runtime/
COPY simulators/ simulators/
COPY testkit/ testkit/
COPY node-collector/ node-collector/
COPY stream-processor/ stream-processor/
COPY sink-apiserver/ sink-apiserver/
COPY launcher/ launcher/
COPY demo/ demo/
# Not built here; the reactor reads every module's pom.
COPY benchmarks/pom.xml benchmarks/
# gcc builds the stub NVML library of the simulators, which only the demo stage ships (production
# mounts the host's libnvidia-ml.so.1).
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
RUN ./mvnw -B -q -Dmaven.test.skip=true -pl launcher,demo -am package

# --- JRE only, non-root: what both images run on ---
FROM eclipse-temurin:17.0.15_6-jre-jammy AS jre
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
EXPOSE 8080
ENTRYPOINT ["java", "-XX:+ExitOnOutOfMemoryError", "-jar", "/opt/devhealth/devhealth.jar"]
CMD ["--help"]
