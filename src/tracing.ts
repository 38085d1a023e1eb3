import { FastifyOtelInstrumentation } from '@fastify/otel'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node'

export interface Tracing {
  /** The Fastify plugin's instrumentation, registered by buildApp before any route. */
  instrumentation: FastifyOtelInstrumentation
  /** Sends the spans still buffered and stops. */
  shutdown(): Promise<void>
}

/**
 * Optional tracing (OTEL_EXPORTER_OTLP_ENDPOINT): spans of every request — its hooks and handler —
 * exported over OTLP/HTTP to `<endpoint>/v1/traces`. register() installs the AsyncLocalStorage context
 * manager and the W3C propagator, so a caller's `traceparent` becomes the parent of the request's span,
 * and the logger's mixin (logger.ts) finds the active span's trace id for every log line.
 */
export function startTracing(endpoint: string): Tracing {
  const exporter = new OTLPTraceExporter({ url: `${endpoint}/v1/traces` })
  const provider = new NodeTracerProvider({
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
  })
  provider.register()
  const instrumentation = new FastifyOtelInstrumentation({
    ignorePaths: (route) => route.url === '/healthz' || route.url === '/readyz' || route.url === '/metrics',
  })
  instrumentation.setTracerProvider(provider)
  return { instrumentation, shutdown: () => provider.shutdown() }
}
