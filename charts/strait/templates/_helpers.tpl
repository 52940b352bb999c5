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
