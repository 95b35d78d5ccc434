# One image for every devhealth service: `devhealth collector|processor|sink|query`.
# Build: docker build -t devhealth:0.1.0 .

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
# gcc builds the stub NVML library the embedded demo uses (not used in production: the host's
# libnvidia-ml.so.1 is mounted instead).
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
RUN ./mvnw -B -q -Dmaven.test.skip=true package

# --- runtime stage: JRE only, non-root ---
FROM eclipse-temurin:17.0.15_6-jre-jammy
RUN groupadd --system --gid 65532 devhealth && useradd --system --uid 65532 --gid 65532 --no-create-home devhealth
WORKDIR /opt/devhealth
COPY --from=build /src/launcher/target/devhealth.jar ./devhealth.jar
COPY --from=build /src/launcher/target/lib/ ./lib/
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["java", "-XX:+ExitOnOutOfMemoryError", "-jar", "/opt/devhealth/devhealth.jar"]
CMD ["--help"]
