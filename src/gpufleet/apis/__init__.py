"""The clouds' API models and what they accept: a plan resource's inputs turned into the request the
provider would send, checked against botocore's models (AWS), the container.v1 discovery document
(GKE) and azure-mgmt-containerservice's models (AKS), and the request rules their shapes leave out."""
