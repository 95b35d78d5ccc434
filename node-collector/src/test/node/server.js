'use strict';

// A DRA driver (plugin registration + DRAResourceHealth) and a kubelet PodResources server written
// with Node's grpc-js instead of grpc-java, so that the collector is tested against a gRPC stack it
// does not share code with. Every service is built from the repository's own .proto files.
//
//   node server.js <config.json>
//
// config.json:
//   protoRoot           directory holding pluginregistration/v1, dra-health/v1alpha1, podresources/v1
//   registrationSocket  the <driver>-reg.sock the collector discovers
//   draSocket           the service socket named in PluginInfo.endpoint; null: the endpoint is left
//                       empty and DRAResourceHealth is served on the registration socket itself, which
//                       is what an empty endpoint means to the kubelet
//   podResourcesSocket  the kubelet's PodResources socket
//   driver, supportedVersions   what GetInfo answers
//   devices             [{pool, device, health: HEALTHY|UNHEALTHY|UNKNOWN, message, timeoutSeconds}]
//   podResources        ListPodResourcesResponse.pod_resources, proto field names
//
// stdin:  one JSON object per line, {"devices": [...]}: the new snapshot, sent on every open stream.
// stdout: one JSON object per line: {"event":"ready"}, then one {"event":"call",...} per call with the
//         :authority it arrived with.
//
// The :authority is not checked here. Node's HTTP/2 layer (nghttp2) checks it before grpc-js sees the
// call: a value that is not a valid URI authority, like a socket path, gets the stream reset with
// PROTOCOL_ERROR. That default is exactly what a client must cope with, so no code of ours adds to it.

const fs = require('fs');
const path = require('path');
const readline = require('readline');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));

function load(relative) {
  const definition = protoLoader.loadSync(path.join(config.protoRoot, relative), {
    keepCase: true, longs: String, enums: String, defaults: true, includeDirs: [config.protoRoot],
  });
  return grpc.loadPackageDefinition(definition);
}

const registration = load('pluginregistration/v1/api.proto').pluginregistration;
const health = load('dra-health/v1alpha1/api.proto').v1alpha1;
const podresources = load('podresources/v1/api.proto').v1;

function emit(event) {
  process.stdout.write(JSON.stringify(event) + '\n');
}

function called(service, method, call) {
  emit({ event: 'call', service, method, authority: call.getHost() });
}

let devices = config.devices || [];
const streams = new Set();

function snapshot() {
  return {
    devices: devices.map((d) => ({
      device: { pool_name: d.pool, device_name: d.device },
      health: d.health,
      last_updated_time: String(Math.floor(Date.now() / 1000)),
      health_check_timeout_seconds: String(d.timeoutSeconds || 0),
      message: d.message || '',
    })),
  };
}

const registrationService = {
  GetInfo(call, callback) {
    called('Registration', 'GetInfo', call);
    callback(null, {
      type: 'DRAPlugin',
      name: config.driver,
      endpoint: config.draSocket || '',
      supported_versions: config.supportedVersions,
    });
  },
  NotifyRegistrationStatus(call, callback) {
    called('Registration', 'NotifyRegistrationStatus', call);
    callback(null, {});
  },
};

const healthService = {
  NodeWatchResources(call) {
    called('DRAResourceHealth', 'NodeWatchResources', call);
    streams.add(call);
    const forget = () => streams.delete(call);
    call.on('cancelled', forget);
    call.on('close', forget);
    call.on('error', forget);
    call.write(snapshot());
  },
};

const podResourcesService = {
  List(call, callback) {
    called('PodResourcesLister', 'List', call);
    callback(null, { pod_resources: config.podResources || [] });
  },
  Get(call, callback) {
    called('PodResourcesLister', 'Get', call);
    callback({ code: grpc.status.UNIMPLEMENTED, details: 'not served by this test kubelet' });
  },
  GetAllocatableResources(call, callback) {
    called('PodResourcesLister', 'GetAllocatableResources', call);
    callback({ code: grpc.status.UNIMPLEMENTED, details: 'not served by this test kubelet' });
  },
};

const servers = [];

function serve(socket, services) {
  try {
    fs.unlinkSync(socket);
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
  }
  const server = new grpc.Server();
  for (const [definition, implementation] of services) {
    server.addService(definition.service, implementation);
  }
  servers.push(server);
  return new Promise((resolve, reject) => {
    server.bindAsync('unix://' + socket, grpc.ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve()));
  });
}

async function main() {
  const onRegistration = [[registration.Registration, registrationService]];
  if (config.draSocket) {
    await serve(config.draSocket, [[health.DRAResourceHealth, healthService]]);
  } else {
    onRegistration.push([health.DRAResourceHealth, healthService]);
  }
  await serve(config.podResourcesSocket, [[podresources.PodResourcesLister, podResourcesService]]);
  // Last: the collector discovers the driver by this socket, so everything it points at is up by then.
  await serve(config.registrationSocket, onRegistration);
  emit({ event: 'ready', grpcJs: require('@grpc/grpc-js/package.json').version });
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  if (!line.trim()) return;
  devices = JSON.parse(line).devices;
  for (const call of streams) {
    call.write(snapshot());
  }
});

function stop() {
  for (const call of streams) call.end();
  for (const server of servers) server.forceShutdown();
  process.exit(0);
}

process.stdin.on('end', stop);
process.on('SIGTERM', stop);

main().catch((error) => {
  process.stderr.write('server failed: ' + (error && error.stack ? error.stack : error) + '\n');
  process.exit(1);
});
