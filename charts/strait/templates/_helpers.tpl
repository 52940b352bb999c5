{{/* the daemons' image: image.repository:image.tag (default: the chart's appVersion) */}}
{{- define "strait.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* the node agents' remoteSubnets: every peer's subnets, as a JSON list */}}
{{- define "strait.remoteSubnets" -}}
{{- $all := list }}
{{- range .Values.gateway.peers }}{{ $all = concat $all .subnets }}{{ end }}
{{- $all | toJson }}
{{- end }}

{{/* the gateway nodes' selector: gateway.nodeSelector, or deploy/'s label when it is empty (Helm merges
     a map given in values with the default one, so the default lives here, not in values.yaml) */}}
{{- define "strait.gatewayNodeSelector" -}}
{{- toYaml (.Values.gateway.nodeSelector | default (dict "submariner.io/gateway" "true")) }}
{{- end }}
